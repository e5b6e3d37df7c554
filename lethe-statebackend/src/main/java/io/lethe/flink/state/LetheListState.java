package io.lethe.flink.state;

import io.lethe.engine.ColumnFamilyHandle;
import io.lethe.engine.WriteBatch;
import io.lethe.engine.WriteOptions;

import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.base.ListSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.runtime.state.ListDelimitedSerializer;
import org.apache.flink.runtime.state.internal.InternalListState;
import org.apache.flink.runtime.state.ttl.TtlAwareSerializer;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;
import org.apache.flink.util.Preconditions;
import org.apache.flink.util.StateMigrationException;

import java.io.IOException;
import java.util.Collection;
import java.util.List;

/**
 * {@code ListState} on Lethe. The value is the list's elements serialized one after another and
 * separated by a ',' byte (Flink's {@link ListDelimitedSerializer} layout); {@code add} is one
 * engine merge (list append with the same separator), never a read.
 */
public class LetheListState<K, N, V> extends AbstractLetheState<K, N, List<V>>
        implements InternalListState<K, N, V> {
    private final ListDelimitedSerializer listDelimited = new ListDelimitedSerializer();
    private TypeSerializer<V> elementSerializer;

    public LetheListState(ColumnFamilyHandle cf, TypeSerializer<N> namespaceSerializer,
            TypeSerializer<List<V>> valueSerializer, List<V> defaultValue, LetheStateContext<K> context) {
        super(cf, namespaceSerializer, valueSerializer, defaultValue, context);
        this.elementSerializer = ((ListSerializer<V>) valueSerializer).getElementSerializer();
    }

    @Override
    public void update(ColumnFamilyHandle cf, TypeSerializer<N> ns, TypeSerializer<List<V>> vs, List<V> dv) {
        super.update(cf, ns, vs, dv);
        this.elementSerializer = ((ListSerializer<V>) vs).getElementSerializer();
    }

    @Override
    public Iterable<V> get() throws IOException {
        return getInternal();
    }

    @Override
    public List<V> getInternal() throws IOException {
        return listOf(db().get(columnFamily, currentKeyBytes()));
    }

    /** The elements of what a lookup of the current key found ({@code stored}; null: nothing, no list). */
    public List<V> listOf(byte[] stored) throws IOException {
        return stored == null ? null : listDelimited.deserializeList(stored, elementSerializer);
    }

    /** A {@link StoredReader} of lists, as {@link #listOf} reads them, for another thread. */
    public StoredReader<List<V>> readerForAnotherThread() {
        TypeSerializer<V> serializer = elementSerializer.duplicate();
        ListDelimitedSerializer delimited = new ListDelimitedSerializer();
        return stored -> stored == null ? null : delimited.deserializeList(stored, serializer);
    }

    @Override
    public void add(V value) throws IOException {
        Preconditions.checkNotNull(value, "You cannot add null to a ListState.");
        byte[] key = currentKeyBytes();
        byte[] bytes = serialize(value, elementSerializer);
        mergeEntry(key, bytes, expiry.issuePut(key, bytes));
    }

    @Override
    public void addAll(List<V> values) throws IOException {
        Preconditions.checkNotNull(values, "List of values to add cannot be null.");
        if (values.isEmpty()) {
            return;
        }
        byte[] key = currentKeyBytes();
        mergeEntry(key, serializeList(values), expiry.issueListElements(key, values));
    }

    @Override
    public void update(List<V> values) throws IOException {
        updateInternal(values);
    }

    @Override
    public void updateInternal(List<V> values) throws IOException {
        Preconditions.checkNotNull(values, "List of values to add cannot be null.");
        if (values.isEmpty()) {
            clear();
            return;
        }
        byte[] key = currentKeyBytes();
        putEntry(key, serializeList(values), expiry.issueListElements(key, values));
    }

    private byte[] serializeList(List<V> values) throws IOException {
        for (V v : values) {
            Preconditions.checkNotNull(v, "You cannot add null to a ListState.");
        }
        return listDelimited.serializeList(values, elementSerializer);
    }

    @Override
    public void mergeNamespaces(N target, Collection<N> sources) throws Exception {
        if (sources == null || sources.isEmpty()) {
            return;
        }
        // Read every source, delete it, and append all of them to the target in one batch.
        WriteBatch batch = new WriteBatch();
        byte[] merged = null;
        for (N source : sources) {
            if (source == null) {
                continue;
            }
            byte[] key = keyBytesFor(source);
            byte[] bytes = db().get(columnFamily, key);
            if (bytes != null) {
                batch.delete(columnFamily, key, expiry.issueDelete(key));
                merged = merged == null ? bytes : concat(merged, bytes);
            }
        }
        if (merged != null) {
            byte[] targetKey = keyBytesFor(target);
            batch.merge(columnFamily, targetKey, merged, expiry.earlierDataDeleteKey(targetKey));
        }
        if (batch.count() > 0) {
            db().write(WriteOptions.NO_WAL, batch);
        }
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] r = new byte[a.length + 1 + b.length];
        System.arraycopy(a, 0, r, 0, a.length);
        r[a.length] = ',';
        System.arraycopy(b, 0, r, a.length + 1, b.length);
        return r;
    }

    /** Migrates element by element: the value is the elements joined by ',', not one list. */
    @Override
    public void migrateSerializedValue(DataInputDeserializer in, DataOutputSerializer out,
            TypeSerializer<List<V>> priorSerializer, TypeSerializer<List<V>> newSerializer,
            TtlTimeProvider ttlTimeProvider) throws StateMigrationException {
        Preconditions.checkArgument(priorSerializer instanceof TtlAwareSerializer.TtlAwareListSerializer);
        Preconditions.checkArgument(newSerializer instanceof TtlAwareSerializer.TtlAwareListSerializer);
        TtlAwareSerializer<V, ?> prior =
                ((TtlAwareSerializer.TtlAwareListSerializer<V>) priorSerializer).getElementSerializer();
        TtlAwareSerializer<V, ?> next =
                ((TtlAwareSerializer.TtlAwareListSerializer<V>) newSerializer).getElementSerializer();
        try {
            while (in.available() > 0) {
                next.migrateValueFromPriorSerializer(prior,
                        () -> ListDelimitedSerializer.deserializeNextElement(in, prior), out, ttlTimeProvider);
                if (in.available() > 0) {
                    out.write(',');
                }
            }
        } catch (Exception e) {
            throw new StateMigrationException("Error while trying to migrate Lethe list state.", e);
        }
    }
}
