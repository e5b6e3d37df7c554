package io.lethe.kafka.streams;

import io.lethe.engine.LetheException;
import io.lethe.engine.WriteBatch;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.processor.internals.RecordBatchingStateRestoreCallback;
import org.apache.kafka.streams.query.Position;
import org.apache.kafka.streams.query.PositionBound;
import org.apache.kafka.streams.query.Query;
import org.apache.kafka.streams.query.QueryConfig;
import org.apache.kafka.streams.query.QueryResult;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.internals.StoreQueryUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Collection;
import java.util.List;
import java.util.Objects;

/**
 * A persistent key-value store of bytes on one Lethe database per store and task. Keys are ordered
 * as unsigned bytes; a null value deletes. Iterators see the store as it was when they opened.
 */
public class LetheKeyValueStore implements KeyValueStore<Bytes, byte[]> {
    private static final Logger LOG = LoggerFactory.getLogger(LetheKeyValueStore.class);

    private final String name;
    private StoreDatabase store;
    private StorePosition position;

    public LetheKeyValueStore(String name) {
        this.name = Objects.requireNonNull(name, "name");
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public void init(StateStoreContext context, StateStore root) {
        store = StoreDatabase.open(name, context);
        position = StorePosition.load(name, context);
        context.register(root, (RecordBatchingStateRestoreCallback) this::restore, position::checkpoint);
    }

    @Override
    public void put(Bytes key, byte[] value) {
        Objects.requireNonNull(key, "key cannot be null");
        store.ensureOpen();
        synchronized (position.get()) {
            try {
                if (value == null) {
                    store.db().delete(store.family(), key.get());
                } else {
                    store.db().put(store.family(), key.get(), value);
                }
            } catch (LetheException e) {
                throw store.failure("writing to", e);
            }
            position.update();
        }
    }

    @Override
    public byte[] putIfAbsent(Bytes key, byte[] value) {
        Objects.requireNonNull(key, "key cannot be null");
        synchronized (position.get()) {
            byte[] old = get(key);
            if (old == null) {
                put(key, value);
            }
            return old;
        }
    }

    @Override
    public void putAll(List<KeyValue<Bytes, byte[]>> entries) {
        WriteBatch batch = new WriteBatch();
        for (KeyValue<Bytes, byte[]> entry : entries) {
            Objects.requireNonNull(entry.key, "key cannot be null");
            add(batch, entry.key.get(), entry.value);
        }
        synchronized (position.get()) {
            write(batch, "writing to");
            position.update();
        }
    }

    @Override
    public byte[] delete(Bytes key) {
        Objects.requireNonNull(key, "key cannot be null");
        synchronized (position.get()) {
            byte[] old = get(key);
            put(key, null);
            return old;
        }
    }

    @Override
    public byte[] get(Bytes key) {
        Objects.requireNonNull(key, "key cannot be null");
        try {
            return store.db().get(store.family(), key.get());
        } catch (LetheException e) {
            throw store.failure("reading from", e);
        }
    }

    @Override
    public KeyValueIterator<Bytes, byte[]> range(Bytes from, Bytes to) {
        return range(from, to, true);
    }

    @Override
    public KeyValueIterator<Bytes, byte[]> reverseRange(Bytes from, Bytes to) {
        return range(from, to, false);
    }

    @Override
    public KeyValueIterator<Bytes, byte[]> all() {
        return range(null, null, true);
    }

    @Override
    public KeyValueIterator<Bytes, byte[]> reverseAll() {
        return range(null, null, false);
    }

    @Override
    public <PS extends Serializer<P>, P> KeyValueIterator<Bytes, byte[]> prefixScan(P prefix, PS serializer) {
        Objects.requireNonNull(prefix, "prefix cannot be null");
        Objects.requireNonNull(serializer, "serializer cannot be null");
        store.ensureOpen();
        return LetheRangeIterator.prefix(store, serializer.serialize(null, prefix));
    }

    @Override
    public long approximateNumEntries() {
        String n = store.db().property(store.family(), "lethe.estimate-num-keys");
        return n == null ? 0 : Long.parseLong(n);
    }

    @Override
    public void flush() {
        if (store != null && store.isOpen()) {
            store.commit();
        }
    }

    @Override
    public void close() {
        if (store != null) {
            store.close();
        }
    }

    @Override
    public boolean persistent() {
        return true;
    }

    @Override
    public boolean isOpen() {
        return store != null && store.isOpen();
    }

    @Override
    public <R> QueryResult<R> query(Query<R> query, PositionBound positionBound, QueryConfig config) {
        return StoreQueryUtils.handleBasicQueries(query, positionBound, config, this, position.get(),
                position.context());
    }

    @Override
    public Position getPosition() {
        return position.get();
    }

    private KeyValueIterator<Bytes, byte[]> range(Bytes from, Bytes to, boolean forward) {
        if (from != null && to != null && from.compareTo(to) > 0) {
            LOG.warn("Returning empty iterator for fetch with invalid key range: from > to. This may be due to"
                    + " range arguments set in the wrong order, or serdes that don't preserve ordering when"
                    + " lexicographically comparing the serialized bytes. Note that the built-in numerical serdes"
                    + " do not follow this for negative numbers");
            return new KeyValueIterators.Empty<>();
        }
        store.ensureOpen();
        return LetheRangeIterator.range(store, from == null ? null : from.get(), to == null ? null : to.get(),
                forward);
    }

    private void restore(Collection<ConsumerRecord<byte[], byte[]>> records) {
        WriteBatch batch = new WriteBatch();
        synchronized (position.get()) {
            for (ConsumerRecord<byte[], byte[]> record : records) {
                position.restored(record);
                add(batch, record.key(), record.value());
            }
            write(batch, "restoring");
        }
    }

    private void add(WriteBatch batch, byte[] key, byte[] value) {
        if (value == null) {
            batch.delete(store.family(), key);
        } else {
            batch.put(store.family(), key, value);
        }
    }

    private void write(WriteBatch batch, String what) {
        try {
            store.db().write(io.lethe.engine.WriteOptions.DEFAULT, batch);
        } catch (LetheException e) {
            throw store.failure(what, e);
        }
    }
}
