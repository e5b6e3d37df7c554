package io.lethe.flink.state;

import io.lethe.engine.ColumnFamilyHandle;
import io.lethe.engine.KeyRanges;
import io.lethe.engine.LetheIterator;
import io.lethe.engine.ReadOptions;
import io.lethe.engine.WriteBatch;
import io.lethe.engine.WriteOptions;

import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.base.MapSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.queryablestate.client.state.serialization.KvStateSerializer;
import org.apache.flink.runtime.state.internal.InternalMapState;
import org.apache.flink.runtime.state.ttl.TtlAwareSerializer;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;
import org.apache.flink.util.FlinkRuntimeException;
import org.apache.flink.util.Preconditions;
import org.apache.flink.util.StateMigrationException;

import java.io.IOException;
import java.util.AbstractMap;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.function.Function;

/**
 * {@code MapState} on Lethe: one entry per user key, keyed by the composite key plus the user key;
 * the value is a null flag byte then the user value (Flink's canonical map entry layout).
 * Iteration reads the (key, namespace) prefix in batches, each with a short-lived engine iterator.
 */
public class LetheMapState<K, N, UK, UV> extends AbstractLetheState<K, N, Map<UK, UV>>
        implements InternalMapState<K, N, UK, UV> {
    /** Entries fetched per engine iterator, as in the RocksDB backend. */
    private static final int BATCH = 128;

    private TypeSerializer<UK> userKeySerializer;
    private TypeSerializer<UV> userValueSerializer;

    public LetheMapState(ColumnFamilyHandle cf, TypeSerializer<N> namespaceSerializer,
            TypeSerializer<Map<UK, UV>> valueSerializer, Map<UK, UV> defaultValue, LetheStateContext<K> context) {
        super(cf, namespaceSerializer, valueSerializer, defaultValue, context);
        setSerializers(valueSerializer);
    }

    @Override
    public void update(ColumnFamilyHandle cf, TypeSerializer<N> ns, TypeSerializer<Map<UK, UV>> vs, Map<UK, UV> dv) {
        super.update(cf, ns, vs, dv);
        setSerializers(vs);
    }

    private void setSerializers(TypeSerializer<Map<UK, UV>> valueSerializer) {
        MapSerializer<UK, UV> map = (MapSerializer<UK, UV>) valueSerializer;
        this.userKeySerializer = map.getKeySerializer();
        this.userValueSerializer = map.getValueSerializer();
    }

    @Override
    public UV get(UK userKey) throws IOException {
        return userValueOf(db().get(columnFamily, currentKey(userKey)));
    }

    /** The engine key of {@code userKey} under the current key and namespace. */
    public byte[] currentKey(UK userKey) throws IOException {
        return currentKeyBytesWithUserKey(userKey, userKeySerializer);
    }

    /** The user value of what a lookup of a user key found ({@code stored}; null: nothing). */
    public UV userValueOf(byte[] stored) throws IOException {
        return stored == null ? null : deserializeUserValue(stored, userValueSerializer);
    }

    /** A {@link StoredReader} of user values, as {@link #userValueOf} reads them, for another thread. */
    public StoredReader<UV> userValueReaderForAnotherThread() {
        TypeSerializer<UV> serializer = userValueSerializer.duplicate();
        return stored -> stored == null ? null : deserializeUserValue(stored, serializer);
    }

    @Override
    public void put(UK userKey, UV userValue) throws IOException {
        byte[] key = currentKeyBytesWithUserKey(userKey, userKeySerializer);
        byte[] bytes = serializeUserValue(userValue);
        putEntry(key, bytes, expiry.issuePut(key, bytes));
    }

    @Override
    public void putAll(Map<UK, UV> map) throws IOException {
        if (map == null || map.isEmpty()) {
            return;
        }
        WriteBatch batch = new WriteBatch();
        for (Map.Entry<UK, UV> e : map.entrySet()) {
            byte[] key = currentKeyBytesWithUserKey(e.getKey(), userKeySerializer);
            byte[] bytes = serializeUserValue(e.getValue());
            batch.put(columnFamily, key, bytes, expiry.issuePut(key, bytes));
        }
        db().write(WriteOptions.NO_WAL, batch);
    }

    @Override
    public void remove(UK userKey) throws IOException {
        byte[] key = currentKeyBytesWithUserKey(userKey, userKeySerializer);
        deleteEntry(key, expiry.issueDelete(key));
    }

    @Override
    public boolean contains(UK userKey) throws IOException {
        return db().get(columnFamily, currentKey(userKey)) != null;
    }

    @Override
    public Iterable<Map.Entry<UK, UV>> entries() {
        return () -> new EntryIterator<>(currentKeyBytes(), e -> e);
    }

    @Override
    public Iterable<UK> keys() {
        return () -> new EntryIterator<>(currentKeyBytes(), Map.Entry::getKey);
    }

    @Override
    public Iterable<UV> values() {
        return () -> new EntryIterator<>(currentKeyBytes(), Map.Entry::getValue);
    }

    @Override
    public Iterator<Map.Entry<UK, UV>> iterator() {
        return new EntryIterator<>(currentKeyBytes(), e -> e);
    }

    @Override
    public boolean isEmpty() {
        return !iterator().hasNext();
    }

    @Override
    public void clear() {
        try {
            byte[] prefix = currentKeyBytes();
            WriteBatch batch = new WriteBatch();
            for (RawEntry raw : scan(prefix, prefix, Integer.MAX_VALUE)) {
                batch.delete(columnFamily, raw.key, expiry.issueDelete(raw.key));
            }
            if (batch.count() > 0) {
                db().write(WriteOptions.NO_WAL, batch);
            }
        } catch (IOException e) {
            throw new FlinkRuntimeException("Error while clearing a Lethe map state", e);
        }
    }

    @Override
    @SuppressWarnings("unchecked")
    public byte[] getSerializedValue(byte[] serializedKeyAndNamespace, TypeSerializer<K> safeKeySerializer,
            TypeSerializer<N> safeNamespaceSerializer, TypeSerializer<Map<UK, UV>> safeValueSerializer)
            throws Exception {
        byte[] prefix = compositeKeyOf(serializedKeyAndNamespace, safeKeySerializer, safeNamespaceSerializer);
        MapSerializer<UK, UV> safe = (MapSerializer<UK, UV>) safeValueSerializer;
        DataInputDeserializer in = new DataInputDeserializer();
        Map<UK, UV> map = new HashMap<>();
        for (RawEntry raw : scan(prefix, prefix, Integer.MAX_VALUE)) {
            in.setBuffer(raw.key, prefix.length, raw.key.length - prefix.length);
            UK k = safe.getKeySerializer().deserialize(in);
            map.put(k, deserializeUserValue(raw.value, safe.getValueSerializer()));
        }
        return map.isEmpty() ? null : KvStateSerializer.serializeMap(map.entrySet(), safe.getKeySerializer(),
                safe.getValueSerializer());
    }

    private byte[] serializeUserValue(UV value) throws IOException {
        dataOutputView.clear();
        dataOutputView.writeBoolean(value == null);
        if (value != null) {
            userValueSerializer.serialize(value, dataOutputView);
        }
        return dataOutputView.getCopyOfBuffer();
    }

    private UV deserializeUserValue(byte[] bytes, TypeSerializer<UV> serializer) throws IOException {
        DataInputDeserializer in = new DataInputDeserializer(bytes);
        boolean isNull = in.readBoolean();
        return isNull ? null : serializer.deserialize(in);
    }

    private static final class RawEntry {
        final byte[] key;
        final byte[] value;

        RawEntry(byte[] key, byte[] value) {
            this.key = key;
            this.value = value;
        }
    }

    /**
     * Up to {@code max} entries of the map whose engine keys start with {@code prefix} (the current
     * key and namespace, {@link #currentKey()}), from engine key {@code from} on, null for the
     * first: a map iterated in chunks that hold nothing open between them.
     */
    public MapChunk<UK, UV> chunk(byte[] prefix, byte[] from, int max) throws IOException {
        List<RawEntry> raw = scan(prefix, from == null ? prefix : from, max);
        List<Map.Entry<UK, UV>> entries = new ArrayList<>(raw.size());
        for (RawEntry r : raw) {
            Entry e = new Entry(r, prefix.length);
            entries.add(new AbstractMap.SimpleImmutableEntry<>(e.getKey(), e.getValue()));
        }
        byte[] next = raw.size() < max ? null : KeyRanges.successor(raw.get(raw.size() - 1).key);
        return new MapChunk<>(entries, next);
    }

    /** Up to max entries whose key starts with prefix, from `from` (inclusive) on. */
    private List<RawEntry> scan(byte[] prefix, byte[] from, int max) throws IOException {
        List<RawEntry> out = new ArrayList<>(Math.min(max, BATCH));
        try (LetheIterator it = db().newIterator(ReadOptions.bounded(from, KeyRanges.prefixEnd(prefix)), columnFamily)) {
            for (it.seekToFirst(); it.isValid() && out.size() < max; it.next()) {
                out.add(new RawEntry(it.key(), it.value()));
            }
        }
        return out;
    }

    /** Iterates the current (key, namespace) in batches; supports remove and setValue. */
    private final class EntryIterator<T> implements Iterator<T> {
        private final byte[] prefix;
        private final Function<Map.Entry<UK, UV>, T> view;
        private List<RawEntry> batch = new ArrayList<>();
        private int pos;
        private boolean exhausted;
        private Entry last;

        EntryIterator(byte[] prefix, Function<Map.Entry<UK, UV>, T> view) {
            this.prefix = prefix;
            this.view = view;
        }

        @Override
        public boolean hasNext() {
            if (pos < batch.size()) {
                return true;
            }
            if (exhausted) {
                return false;
            }
            try {
                byte[] from = batch.isEmpty() ? prefix : KeyRanges.successor(batch.get(batch.size() - 1).key);
                batch = scan(prefix, from, BATCH);
                pos = 0;
                exhausted = batch.size() < BATCH;
                return !batch.isEmpty();
            } catch (IOException e) {
                throw new FlinkRuntimeException("Error while iterating a Lethe map state", e);
            }
        }

        @Override
        public T next() {
            if (!hasNext()) {
                throw new NoSuchElementException();
            }
            last = new Entry(batch.get(pos++), prefix.length);
            return view.apply(last);
        }

        @Override
        public void remove() {
            if (last == null || last.removed) {
                throw new IllegalStateException("next() has not been called, or the entry was removed");
            }
            last.remove();
        }
    }

    /** A map entry over raw bytes, deserialized on first access. */
    private final class Entry implements Map.Entry<UK, UV> {
        private final RawEntry raw;
        private final int prefixLength;
        private UK key;
        private UV value;
        private boolean keyRead;
        private boolean valueRead;
        boolean removed;

        Entry(RawEntry raw, int prefixLength) {
            this.raw = raw;
            this.prefixLength = prefixLength;
        }

        @Override
        public UK getKey() {
            if (!keyRead) {
                try {
                    DataInputDeserializer in = new DataInputDeserializer(raw.key, prefixLength, raw.key.length - prefixLength);
                    key = userKeySerializer.deserialize(in);
                } catch (IOException e) {
                    throw new FlinkRuntimeException("Error while deserializing a map state key", e);
                }
                keyRead = true;
            }
            return key;
        }

        @Override
        public UV getValue() {
            if (removed) {
                return null;
            }
            if (!valueRead) {
                try {
                    value = deserializeUserValue(raw.value, userValueSerializer);
                } catch (IOException e) {
                    throw new FlinkRuntimeException("Error while deserializing a map state value", e);
                }
                valueRead = true;
            }
            return value;
        }

        @Override
        public UV setValue(UV newValue) {
            if (removed) {
                throw new IllegalStateException("the entry was removed");
            }
            UV old = getValue();
            try {
                byte[] bytes = serializeUserValue(newValue);
                db().put(columnFamily, raw.key, bytes, expiry.issuePut(raw.key, bytes));
            } catch (IOException e) {
                throw new FlinkRuntimeException("Error while updating a map state value", e);
            }
            value = newValue;
            return old;
        }

        // Map.Entry's contract: equal to any entry with equal key and value.
        @Override
        public boolean equals(Object o) {
            if (!(o instanceof Map.Entry)) {
                return false;
            }
            Map.Entry<?, ?> e = (Map.Entry<?, ?>) o;
            return java.util.Objects.equals(getKey(), e.getKey()) && java.util.Objects.equals(getValue(), e.getValue());
        }

        @Override
        public int hashCode() {
            return java.util.Objects.hashCode(getKey()) ^ java.util.Objects.hashCode(getValue());
        }

        @Override
        public String toString() {
            return getKey() + "=" + getValue();
        }

        void remove() {
            try {
                db().delete(WriteOptions.DEFAULT, columnFamily, raw.key, expiry.issueDelete(raw.key));
            } catch (IOException e) {
                throw new FlinkRuntimeException("Error while removing a map state entry", e);
            }
            removed = true;
            value = null;
        }
    }

    /** Migrates one map entry's value: {@code [isNull byte][value]}, the user key unchanged. */
    @Override
    public void migrateSerializedValue(DataInputDeserializer in, DataOutputSerializer out,
            TypeSerializer<Map<UK, UV>> priorSerializer, TypeSerializer<Map<UK, UV>> newSerializer,
            TtlTimeProvider ttlTimeProvider) throws StateMigrationException {
        Preconditions.checkArgument(priorSerializer instanceof TtlAwareSerializer.TtlAwareMapSerializer);
        Preconditions.checkArgument(newSerializer instanceof TtlAwareSerializer.TtlAwareMapSerializer);
        TtlAwareSerializer<UV, ?> prior =
                ((TtlAwareSerializer.TtlAwareMapSerializer<UK, UV>) priorSerializer).getValueSerializer();
        TtlAwareSerializer<UV, ?> next =
                ((TtlAwareSerializer.TtlAwareMapSerializer<UK, UV>) newSerializer).getValueSerializer();
        try {
            boolean isNull = in.readBoolean();
            out.writeBoolean(isNull);
            if (!isNull) {
                next.migrateValueFromPriorSerializer(prior, () -> prior.deserialize(in), out, ttlTimeProvider);
            }
        } catch (Exception e) {
            throw new StateMigrationException("Error while trying to migrate Lethe map state.", e);
        }
    }
}

