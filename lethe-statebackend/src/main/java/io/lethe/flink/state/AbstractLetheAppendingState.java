package io.lethe.flink.state;

import io.lethe.engine.ColumnFamilyHandle;
import io.lethe.engine.WriteOptions;

import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.runtime.state.internal.InternalMergingState;

import java.io.IOException;
import java.util.Collection;

/**
 * Shared read-modify-write logic of reducing and aggregating state: the stored value (SV) is
 * folded with each input and, for namespace merging, with the other namespaces' values.
 */
public abstract class AbstractLetheAppendingState<K, N, IN, SV, OUT> extends AbstractLetheState<K, N, SV>
        implements InternalMergingState<K, N, IN, SV, OUT> {

    AbstractLetheAppendingState(ColumnFamilyHandle cf, TypeSerializer<N> namespaceSerializer,
            TypeSerializer<SV> valueSerializer, SV defaultValue, LetheStateContext<K> context) {
        super(cf, namespaceSerializer, valueSerializer, defaultValue, context);
    }

    /** Combines two stored values (both non-null). */
    abstract SV mergeValues(SV a, SV b) throws Exception;

    @Override
    public SV getInternal() throws IOException {
        return getInternal(currentKeyBytes());
    }

    SV getInternal(byte[] key) throws IOException {
        return storedValueOf(db().get(columnFamily, key));
    }

    /** The stored value of what a lookup found ({@code stored}; null: nothing). */
    public SV storedValueOf(byte[] stored) throws IOException {
        return stored == null ? null : deserializeValue(stored);
    }

    /** A {@link StoredReader} of stored values, as {@link #storedValueOf} reads them, for another thread. */
    public StoredReader<SV> readerForAnotherThread() {
        TypeSerializer<SV> serializer = valueSerializer.duplicate();
        DataInputDeserializer in = new DataInputDeserializer();
        return stored -> {
            if (stored == null) {
                return null;
            }
            in.setBuffer(stored);
            return serializer.deserialize(in);
        };
    }

    @Override
    public void updateInternal(SV value) throws IOException {
        updateInternal(currentKeyBytes(), value);
    }

    void updateInternal(byte[] key, SV value) throws IOException {
        if (value == null) {
            db().delete(WriteOptions.DEFAULT, columnFamily, key, expiry.issueDelete(key));
        } else {
            byte[] bytes = serializeValue(value);
            db().put(columnFamily, key, bytes, expiry.issuePut(key, bytes));
        }
    }

    @Override
    public void mergeNamespaces(N target, Collection<N> sources) throws Exception {
        if (sources == null || sources.isEmpty()) {
            return;
        }
        SV merged = null;
        for (N source : sources) {
            if (source == null) {
                continue;
            }
            byte[] key = keyBytesFor(source);
            SV value = getInternal(key);
            if (value != null) {
                db().delete(WriteOptions.DEFAULT, columnFamily, key, expiry.issueDelete(key));
                merged = merged == null ? value : mergeValues(merged, value);
            }
        }
        if (merged != null) {
            byte[] targetKey = keyBytesFor(target);
            SV existing = getInternal(targetKey);
            updateInternal(targetKey, existing == null ? merged : mergeValues(existing, merged));
        }
    }
}
