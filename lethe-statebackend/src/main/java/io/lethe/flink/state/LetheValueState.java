package io.lethe.flink.state;

import io.lethe.engine.ColumnFamilyHandle;

import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.runtime.state.internal.InternalValueState;

import java.io.IOException;

/** {@code ValueState} on Lethe: one entry per (key, namespace). */
public class LetheValueState<K, N, V> extends AbstractLetheState<K, N, V> implements InternalValueState<K, N, V> {

    public LetheValueState(ColumnFamilyHandle cf, TypeSerializer<N> namespaceSerializer,
            TypeSerializer<V> valueSerializer, V defaultValue, LetheStateContext<K> context) {
        super(cf, namespaceSerializer, valueSerializer, defaultValue, context);
    }

    @Override
    public V value() throws IOException {
        return valueOf(db().get(columnFamily, currentKeyBytes()));
    }

    /** The value of what a lookup of the current key found ({@code stored}; null: nothing, the default value). */
    public V valueOf(byte[] stored) throws IOException {
        return stored == null ? getDefaultValue() : deserializeValue(stored);
    }

    /** A {@link StoredReader} of this state's values, as {@link #valueOf} reads them, for another thread. */
    public StoredReader<V> readerForAnotherThread() {
        TypeSerializer<V> serializer = valueSerializer.duplicate();
        V defaults = defaultValue;
        DataInputDeserializer in = new DataInputDeserializer();
        return stored -> {
            if (stored == null) {
                return defaults == null ? null : serializer.copy(defaults);
            }
            in.setBuffer(stored);
            return serializer.deserialize(in);
        };
    }

    @Override
    public void update(V value) throws IOException {
        if (value == null) {
            clear();
            return;
        }
        byte[] key = currentKeyBytes();
        byte[] bytes = serializeValue(value);
        putEntry(key, bytes, expiry.issuePut(key, bytes));
    }
}
