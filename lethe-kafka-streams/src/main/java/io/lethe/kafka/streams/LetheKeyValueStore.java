package io.lethe.kafka.streams;

import io.lethe.engine.LetheException;
import io.lethe.engine.WriteBatch;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Collection;
import java.util.List;
import java.util.Objects;

/**
 * A persistent key-value store of bytes on one Lethe database per store and task. Keys are ordered
 * as unsigned bytes; a null value deletes. Iterators see the store as it was when they opened.
 */
public class LetheKeyValueStore extends LetheStateStore implements KeyValueStore<Bytes, byte[]> {
    private static final Logger LOG = LoggerFactory.getLogger(LetheKeyValueStore.class);

    public LetheKeyValueStore(String name) {
        super(name, LetheStoreConfig.KEY_VALUE_COMPRESSION);
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






    private KeyValueIterator<Bytes, byte[]> range(Bytes from, Bytes to, boolean forward) {
        if (from != null && to != null && from.compareTo(to) > 0) {
            warnInvalidRange(LOG);
            return new KeyValueIterators.Empty<>();
        }
        store.ensureOpen();
        return LetheRangeIterator.range(store, from == null ? null : from.get(), to == null ? null : to.get(),
                forward);
    }

    @Override
    protected void restore(Collection<ConsumerRecord<byte[], byte[]>> records) {
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

}
