package io.lethe.flink.state;

import io.lethe.engine.ColumnFamilyHandle;
import io.lethe.engine.LetheDb;
import io.lethe.engine.WriteBatch;
import io.lethe.engine.WriteOptions;
import io.lethe.flink.expiry.StateExpiry;

import org.apache.flink.api.common.state.State;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.queryablestate.client.state.serialization.KvStateSerializer;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.runtime.state.SerializedCompositeKeyBuilder;
import org.apache.flink.runtime.state.internal.InternalKvState;
import org.apache.flink.runtime.state.ttl.TtlAwareSerializer;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;
import org.apache.flink.util.FlinkRuntimeException;
import org.apache.flink.util.StateMigrationException;

import java.io.IOException;

/**
 * Base of every Lethe keyed state: one column family, keys in Flink's composite layout
 * ([key group][key][namespace], {@link SerializedCompositeKeyBuilder}), values in Flink's
 * canonical serialized form, so canonical savepoints need no conversion.
 *
 * <p>Not thread-safe: a keyed state is used by its operator's thread only.
 */
public abstract class AbstractLetheState<K, N, V> implements InternalKvState<K, N, V>, State {
    protected final LetheStateContext<K> context;
    protected ColumnFamilyHandle columnFamily;
    protected TypeSerializer<N> namespaceSerializer;
    protected TypeSerializer<V> valueSerializer;
    protected V defaultValue;
    /** The delete keys this state writes (set by the backend before first use). */
    protected StateExpiry expiry;
    protected final DataOutputSerializer dataOutputView = new DataOutputSerializer(128);
    protected final DataInputDeserializer dataInputView = new DataInputDeserializer();
    private final SerializedCompositeKeyBuilder<K> keyBuilder;
    private N currentNamespace;
    /** Where writes of one key go: null, the engine at once; otherwise a batch its owner writes. */
    private WriteBatch batch;

    protected AbstractLetheState(
            ColumnFamilyHandle columnFamily,
            TypeSerializer<N> namespaceSerializer,
            TypeSerializer<V> valueSerializer,
            V defaultValue,
            LetheStateContext<K> context) {
        this.columnFamily = columnFamily;
        this.namespaceSerializer = namespaceSerializer;
        this.valueSerializer = valueSerializer;
        this.defaultValue = defaultValue;
        this.context = context;
        this.keyBuilder = context.sharedKeyBuilder();
    }

    /** Called when a restored state is registered again with new serializers. */
    public void update(ColumnFamilyHandle columnFamily, TypeSerializer<N> namespaceSerializer,
            TypeSerializer<V> valueSerializer, V defaultValue) {
        this.columnFamily = columnFamily;
        this.namespaceSerializer = namespaceSerializer;
        this.valueSerializer = valueSerializer;
        this.defaultValue = defaultValue;
    }

    /** Sets the delete keys this state writes; the backend calls it whenever it (re)registers the state. */
    public void setExpiry(StateExpiry expiry) {
        this.expiry = expiry;
    }

    /** The engine that stores this state. */
    public LetheDb db() {
        return context.db();
    }

    /** The column family of this state's entries. */
    public ColumnFamilyHandle columnFamily() {
        return columnFamily;
    }

    /**
     * Sends this state's writes of one key (update, add, put, remove, clear of one entry) into
     * {@code batch} until called again; null sends them to the engine at once. Writes of many
     * keys and read-modify-writes always go to the engine.
     */
    public void writeInto(WriteBatch batch) {
        this.batch = batch;
    }

    protected void putEntry(byte[] key, byte[] value, long deleteKey) throws IOException {
        if (batch == null) {
            db().put(columnFamily, key, value, deleteKey);
        } else {
            batch.put(columnFamily, key, value, deleteKey);
        }
    }

    protected void mergeEntry(byte[] key, byte[] operand, long deleteKey) throws IOException {
        if (batch == null) {
            db().merge(columnFamily, key, operand, deleteKey);
        } else {
            batch.merge(columnFamily, key, operand, deleteKey);
        }
    }

    protected void deleteEntry(byte[] key, long deleteKey) throws IOException {
        if (batch == null) {
            db().delete(WriteOptions.DEFAULT, columnFamily, key, deleteKey);
        } else {
            batch.delete(columnFamily, key, deleteKey);
        }
    }

    /** The engine key of the current key and namespace. */
    public byte[] currentKey() {
        return currentKeyBytes();
    }

    @Override
    public void clear() {
        try {
            byte[] key = currentKeyBytes();
            deleteEntry(key, expiry.issueDelete(key));
        } catch (IOException e) {
            throw new FlinkRuntimeException("Error while removing entry from Lethe", e);
        }
    }

    @Override
    public void setCurrentNamespace(N namespace) {
        this.currentNamespace = namespace;
    }

    protected N currentNamespace() {
        return currentNamespace;
    }

    @Override
    public TypeSerializer<K> getKeySerializer() {
        return context.getKeySerializer();
    }

    @Override
    public TypeSerializer<N> getNamespaceSerializer() {
        return namespaceSerializer;
    }

    @Override
    public TypeSerializer<V> getValueSerializer() {
        return valueSerializer;
    }

    @Override
    public StateIncrementalVisitor<K, N, V> getStateIncrementalVisitor(int recommendedMaxNumberOfReturnedRecords) {
        // As in the RocksDB backend: incremental cleanup visits heap state only.
        throw new UnsupportedOperationException("Lethe state does not support incremental visiting");
    }

    @Override
    public byte[] getSerializedValue(byte[] serializedKeyAndNamespace, TypeSerializer<K> safeKeySerializer,
            TypeSerializer<N> safeNamespaceSerializer, TypeSerializer<V> safeValueSerializer) throws Exception {
        return db().get(columnFamily, compositeKeyOf(serializedKeyAndNamespace, safeKeySerializer, safeNamespaceSerializer));
    }

    /** The composite key for a (key, namespace) pair serialized by a queryable-state client. */
    protected byte[] compositeKeyOf(byte[] serializedKeyAndNamespace, TypeSerializer<K> safeKeySerializer,
            TypeSerializer<N> safeNamespaceSerializer) throws IOException {
        Tuple2<K, N> keyAndNamespace = KvStateSerializer.deserializeKeyAndNamespace(
                serializedKeyAndNamespace, safeKeySerializer, safeNamespaceSerializer);
        int keyGroup = KeyGroupRangeAssignment.assignToKeyGroup(keyAndNamespace.f0, context.getNumberOfKeyGroups());
        SerializedCompositeKeyBuilder<K> builder =
                new SerializedCompositeKeyBuilder<>(safeKeySerializer, context.keyGroupPrefixBytes(), 32);
        builder.setKeyAndKeyGroup(keyAndNamespace.f0, keyGroup);
        return builder.buildCompositeKeyNamespace(keyAndNamespace.f1, safeNamespaceSerializer);
    }

    protected byte[] currentKeyBytes() {
        return keyBuilder.buildCompositeKeyNamespace(currentNamespace, namespaceSerializer);
    }

    protected byte[] keyBytesFor(N namespace) {
        return keyBuilder.buildCompositeKeyNamespace(namespace, namespaceSerializer);
    }

    protected <UK> byte[] currentKeyBytesWithUserKey(UK userKey, TypeSerializer<UK> userKeySerializer)
            throws IOException {
        return keyBuilder.buildCompositeKeyNamesSpaceUserKey(currentNamespace, namespaceSerializer, userKey,
                userKeySerializer);
    }

    protected <T> byte[] serialize(T value, TypeSerializer<T> serializer) throws IOException {
        dataOutputView.clear();
        serializer.serialize(value, dataOutputView);
        return dataOutputView.getCopyOfBuffer();
    }

    protected byte[] serializeValue(V value) throws IOException {
        return serialize(value, valueSerializer);
    }

    protected V deserializeValue(byte[] bytes) throws IOException {
        dataInputView.setBuffer(bytes);
        return valueSerializer.deserialize(dataInputView);
    }

    protected V getDefaultValue() {
        return defaultValue == null ? null : valueSerializer.copy(defaultValue);
    }

    /** Rewrites one serialized value for a new serializer (state migration, TTL on/off). */
    public void migrateSerializedValue(DataInputDeserializer in, DataOutputSerializer out,
            TypeSerializer<V> priorSerializer, TypeSerializer<V> newSerializer, TtlTimeProvider ttlTimeProvider)
            throws StateMigrationException {
        @SuppressWarnings("unchecked")
        TtlAwareSerializer<V, ?> prior = (TtlAwareSerializer<V, ?>) priorSerializer;
        @SuppressWarnings("unchecked")
        TtlAwareSerializer<V, ?> next = (TtlAwareSerializer<V, ?>) newSerializer;
        try {
            next.migrateValueFromPriorSerializer(prior, () -> prior.deserialize(in), out, ttlTimeProvider);
        } catch (Exception e) {
            throw new StateMigrationException("Error while trying to migrate Lethe state.", e);
        }
    }
}
