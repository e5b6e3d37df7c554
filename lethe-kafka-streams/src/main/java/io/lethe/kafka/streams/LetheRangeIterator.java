package io.lethe.kafka.streams;

import io.lethe.engine.KeyRanges;
import io.lethe.engine.LetheException;
import io.lethe.engine.LetheIterator;
import io.lethe.engine.ReadOptions;

import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.errors.InvalidStateStoreException;


/**
 * The entries of a store between two keys, forwards or backwards, as of its first look (later
 * writes are not seen). Bounds are inclusive unless built by {@link #prefix}; either may be
 * null for unbounded. Closing the store closes it: using it afterwards throws {@link
 * InvalidStateStoreException}, as key-value stores do, or finds no more entries when it was opened
 * {@link #endingWithStore()}, as window and session stores do.
 */
final class LetheRangeIterator extends LookaheadIterator<Bytes, byte[]> {
    private final StoreDatabase store;
    private final byte[] from;
    private LetheIterator it;  // opened at the first look
    private final byte[] to;
    private final boolean toInclusive;
    private final boolean forward;
    private volatile boolean open = true;
    private volatile boolean closedWithStore;
    private boolean endsWithStore;

    private LetheRangeIterator(StoreDatabase store, byte[] from, byte[] to, boolean toInclusive,
                               boolean forward) {
        this.store = store;
        this.from = from;
        this.to = to;
        this.toInclusive = toInclusive;
        this.forward = forward;
        store.track(this);
    }

    /**
     * Opens the engine's iterator at the first look: writes made between creating this iterator and
     * reading from it are seen, as Kafka Streams' window stores show them.
     */
    private LetheIterator open() throws LetheException {
        // Backwards, the engine stops at the lower bound; forwards, the upper end is checked here.
        ReadOptions bounds = forward ? ReadOptions.DEFAULT : ReadOptions.bounded(from, null);
        LetheIterator opened = store.db().newIterator(bounds, store.family());
        if (forward) {
            if (from == null) {
                opened.seekToFirst();
            } else {
                opened.seek(from);
            }
        } else if (to == null) {
            opened.seekToLast();
        } else {
            opened.seekForPrev(to);
            if (!toInclusive && opened.isValid() && opened.compareKeyTo(to) == 0) {
                opened.prev();
            }
        }
        return opened;
    }

    /** Keys in [from, to], either null for unbounded. */
    static LetheRangeIterator range(StoreDatabase store, byte[] from, byte[] to, boolean forward) {
        return new LetheRangeIterator(store, from, to, true, forward);
    }

    /** Keys that start with prefix. */
    static LetheRangeIterator prefix(StoreDatabase store, byte[] prefix) {
        return new LetheRangeIterator(store, prefix, KeyRanges.prefixEnd(prefix), false, true);
    }

    /** Makes the iterator end, instead of failing, once its store closes. */
    LetheRangeIterator endingWithStore() {
        endsWithStore = true;
        return this;
    }

    /** Called by the store as it closes. */
    void closeWithStore() {
        closedWithStore = true;
        close();
    }

    boolean closedWithStore() {
        return closedWithStore;
    }

    @Override
    public boolean hasNext() {
        if (!open) {
            if (closedWithStore && endsWithStore) {
                return false;
            }
            throw new InvalidStateStoreException("Lethe iterator of a store is closed");
        }
        return super.hasNext();
    }

    @Override
    public void close() {
        if (open) {
            open = false;
            if (it != null) {
                it.close();
            }
            store.untrack(this);
        }
    }

    @Override
    protected KeyValue<Bytes, byte[]> fetch() {
        try {
            if (it == null) {
                it = open();
            }
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
