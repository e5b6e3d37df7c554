package io.lethe.kafka.streams;

import io.lethe.engine.LetheException;
import io.lethe.engine.LetheIterator;
import io.lethe.engine.ReadOptions;

import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.state.KeyValueIterator;

import java.util.NoSuchElementException;

/**
 * The entries of a store between two keys, forwards or backwards, as of the moment it was opened
 * (later writes are not seen). Bounds are inclusive unless built by {@link #prefix}; either may be
 * null for unbounded. Closing the store closes it; using it afterwards throws {@link
 * InvalidStateStoreException}.
 */
final class LetheRangeIterator implements KeyValueIterator<Bytes, byte[]> {
    private final StoreDatabase store;
    private final LetheIterator it;
    private final byte[] to;
    private final boolean toInclusive;
    private final boolean forward;
    private KeyValue<Bytes, byte[]> next;
    private volatile boolean open = true;

    private LetheRangeIterator(StoreDatabase store, byte[] from, byte[] to, boolean toInclusive,
                               boolean forward) {
        this.store = store;
        this.to = to;
        this.toInclusive = toInclusive;
        this.forward = forward;
        try {
            // Backwards, the engine stops at the lower bound; forwards, the upper end is checked here.
            ReadOptions bounds = forward ? ReadOptions.DEFAULT : ReadOptions.bounded(from, null);
            this.it = store.db().newIterator(bounds, store.family());
            if (forward) {
                if (from == null) {
                    it.seekToFirst();
                } else {
                    it.seek(from);
                }
            } else if (to == null) {
                it.seekToLast();
            } else {
                it.seekForPrev(to);
                if (!toInclusive && it.isValid() && it.compareKeyTo(to) == 0) {
                    it.prev();
                }
            }
        } catch (LetheException e) {
            throw store.failure("iterating", e);
        }
        store.track(this);
    }

    /** Keys in [from, to], either null for unbounded. */
    static LetheRangeIterator range(StoreDatabase store, byte[] from, byte[] to, boolean forward) {
        return new LetheRangeIterator(store, from, to, true, forward);
    }

    /** Keys that start with prefix. */
    static LetheRangeIterator prefix(StoreDatabase store, byte[] prefix) {
        return new LetheRangeIterator(store, prefix, successor(prefix), false, true);
    }

    /** The smallest key greater than every key with this prefix, or null if there is none. */
    static byte[] successor(byte[] prefix) {
        byte[] end = prefix.clone();
        for (int i = end.length - 1; i >= 0; i--) {
            if (end[i] != (byte) 0xFF) {
                end[i]++;
                return java.util.Arrays.copyOf(end, i + 1);
            }
        }
        return null;
    }

    @Override
    public boolean hasNext() {
        if (!open) {
            throw new InvalidStateStoreException("Lethe iterator of a store is closed");
        }
        if (next == null) {
            next = fetch();
        }
        return next != null;
    }

    @Override
    public KeyValue<Bytes, byte[]> next() {
        if (!hasNext()) {
            throw new NoSuchElementException();
        }
        KeyValue<Bytes, byte[]> entry = next;
        next = null;
        return entry;
    }

    @Override
    public Bytes peekNextKey() {
        if (!hasNext()) {
            throw new NoSuchElementException();
        }
        return next.key;
    }

    @Override
    public void close() {
        if (open) {
            open = false;
            it.close();
            store.untrack(this);
        }
    }

    private KeyValue<Bytes, byte[]> fetch() {
        try {
            if (!it.isValid() || (forward && pastTo())) {
                return null;
            }
            KeyValue<Bytes, byte[]> entry = KeyValue.pair(Bytes.wrap(it.key()), it.value());
            if (forward) {
                it.next();
            } else {
                it.prev();
            }
            return entry;
        } catch (LetheException e) {
            throw store.failure("iterating", e);
        } catch (IllegalStateException e) {
            throw new InvalidStateStoreException("Lethe iterator of a store is closed");
        }
    }

    private boolean pastTo() {
        if (to == null) {
            return false;
        }
        int c = it.compareKeyTo(to);
        return toInclusive ? c > 0 : c >= 0;
    }
}
