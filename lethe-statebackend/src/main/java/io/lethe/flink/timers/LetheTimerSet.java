package io.lethe.flink.timers;

import io.lethe.engine.KeyRanges;
import io.lethe.engine.LetheDb;
import io.lethe.engine.LetheException;

import org.apache.flink.runtime.state.InternalPriorityQueue;
import org.apache.flink.runtime.state.heap.AbstractHeapPriorityQueueElement;
import org.apache.flink.util.CloseableIterator;
import org.apache.flink.util.FlinkRuntimeException;

import java.util.Arrays;
import java.util.Collection;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.TreeMap;

/**
 * One key group's timers, kept in the engine with its smallest rows cached on the heap: {@code peek},
 * {@code poll} and most {@code add}s touch only the cache. The cache holds up to a bound of the
 * group's smallest rows; every row in the engine and not in the cache sorts after the cache's last.
 * When the cache runs empty it is refilled with one sequential read from just past the last row it
 * gave away, so fired timers are never read again. A row's stickiness (see {@link TimerStore}) is
 * cached with it, so that its poll knows whether a tombstone is due.
 *
 * <p>An element of Flink's {@code KeyGroupPartitionedPriorityQueue}. Not thread-safe.
 */
final class LetheTimerSet<T> extends AbstractHeapPriorityQueueElement implements InternalPriorityQueue<T> {
    private final TimerStore store;
    private final RowCodec<T> codec;
    private final int keyGroup;
    private final byte[] lowerBound;
    private final byte[] upperBound;
    private final int cacheSize;
    /** Row -> sticky. */
    private final TreeMap<byte[], Boolean> cache = new TreeMap<>(Arrays::compareUnsigned);
    private boolean allInCache;
    /** Rows at or below it are not read when the cache is refilled (null: none). */
    private byte[] seekHint;
    /** L: the largest row polled (null: none), restored with the queue. */
    private byte[] lastPolled;
    private T peekCache;

    LetheTimerSet(TimerStore store, RowCodec<T> codec, int keyGroup, int cacheSize, byte[] lastPolled) {
        this.store = store;
        this.codec = codec;
        this.keyGroup = keyGroup;
        this.lowerBound = codec.prefix(keyGroup);
        this.upperBound = codec.prefix(keyGroup + 1);
        this.cacheSize = cacheSize;
        this.lastPolled = lastPolled;
    }

    /** L, for the snapshot's metadata (null: nothing polled). */
    byte[] lastPolled() {
        return lastPolled;
    }

    @Override
    public T peek() {
        refillIfEmpty();
        if (peekCache == null && !cache.isEmpty()) {
            peekCache = codec.element(cache.firstKey());
        }
        return peekCache;
    }

    @Override
    public T poll() {
        refillIfEmpty();
        Map.Entry<byte[], Boolean> first = cache.pollFirstEntry();
        if (first == null) {
            return null;
        }
        byte[] row = first.getKey();
        store.polled(row, first.getValue());
        store.countPending(-1);
        if (lastPolled == null || Arrays.compareUnsigned(row, lastPolled) > 0) {
            lastPolled = row;
        }
        if (cache.isEmpty()) {
            seekHint = row;
        }
        T element = peekCache != null ? peekCache : codec.element(row);
        peekCache = null;
        return element;
    }

    @Override
    public boolean add(T element) {
        refillIfEmpty();
        byte[] row = codec.row(keyGroup, element);
        boolean full = cache.size() >= cacheSize;
        if ((!full && allInCache) || (!cache.isEmpty() && Arrays.compareUnsigned(row, cache.lastKey()) < 0)) {
            if (cache.containsKey(row)) {
                return false;
            }
            store.countPending(1);
            if (full) {
                cache.pollLastEntry(); // it stays in the engine
                allInCache = false;
            }
            long deleteKey = store.deleteKeyForAdd(row, lastPolled);
            cache.put(row, deleteKey == LetheDb.MAX_DELETE_KEY);
            store.put(row, deleteKey);
            if (cache.firstKey() == row) {
                peekCache = null;
                return true;
            }
            return false;
        }
        if (!store.recentlyWritten(row)) {
            if (store.counting() && !pendingInEngine(row)) {
                store.countPending(1);
            }
            store.put(row, store.deleteKeyForAdd(row, lastPolled));
            allInCache = false;
        }
        return false;
    }

    @Override
    public boolean remove(T element) {
        refillIfEmpty();
        if (cache.isEmpty()) {
            return false; // so is the engine
        }
        byte[] row = codec.row(keyGroup, element);
        byte[] head = cache.firstKey();
        boolean beyondCache = !allInCache && Arrays.compareUnsigned(row, cache.lastKey()) > 0;
        boolean cached = cache.remove(row) != null;
        if (store.counting()
                && (cached || beyondCache && (store.recentlyWritten(row) || pendingInEngine(row)))) {
            store.countPending(-1);
        }
        if (cached || beyondCache) {
            store.delete(row);
        }
        // Otherwise the row is not pending (every pending row outside the cache sorts after its
        // last): polled already, or never added, so it needs no tombstone. Flink's triggers remove
        // the timer that just fired when they clear its window.
        if (cache.isEmpty()) {
            seekHint = row;
            peekCache = null;
            return true;
        }
        if (Arrays.equals(head, row)) {
            peekCache = null;
            return true;
        }
        return false;
    }

    @Override
    public boolean isEmpty() {
        refillIfEmpty();
        return cache.isEmpty();
    }

    @Override
    public int size() {
        refillIfEmpty();
        if (allInCache) {
            return cache.size();
        }
        int[] n = {0};
        readRows(lowerBound, Integer.MAX_VALUE, (row, sticky) -> n[0]++);
        return n[0];
    }

    @Override
    public void addAll(Collection<? extends T> elements) {
        if (elements != null) {
            for (T e : elements) {
                add(e);
            }
        }
    }

    /**
     * Every pending element in order, read lazily from a view of the engine taken now: later changes
     * are not seen.
     */
    @Override
    public CloseableIterator<T> iterator() {
        PendingRows rows = open(lowerBound);
        return new CloseableIterator<>() {
            private int read;

            @Override
            public boolean hasNext() {
                return rows.isValid();
            }

            @Override
            public T next() {
                if (!rows.isValid()) {
                    throw new NoSuchElementException();
                }
                T element = codec.element(rows.row());
                read++;
                advance(rows);
                return element;
            }

            @Override
            public void close() {
                rows.close();
                store.recordRead(read);
            }
        };
    }

    /** Whether the row is pending in the engine (reads it; for counting). */
    private boolean pendingInEngine(byte[] row) {
        try (PendingRows rows = open(row)) {
            return rows.isValid() && Arrays.equals(rows.row(), row);
        }
    }

    /** Refills an empty cache from the engine, unless the engine holds nothing more. */
    private void refillIfEmpty() {
        if (!cache.isEmpty() || allInCache) {
            return;
        }
        byte[] from = seekHint == null ? lowerBound : KeyRanges.successor(seekHint);
        boolean more = readRows(from, cacheSize, cache::put);
        allInCache = !more;
        peekCache = null;
    }

    private interface RowSink {
        void accept(byte[] row, boolean sticky);
    }

    /**
     * Reads up to {@code limit} pending rows from {@code from} on; true if more pending rows follow.
     */
    private boolean readRows(byte[] from, int limit, RowSink sink) {
        int n = 0;
        try (PendingRows rows = open(from)) {
            for (; rows.isValid(); advance(rows)) {
                if (n == limit) {
                    return true;
                }
                sink.accept(rows.row(), rows.sticky());
                n++;
            }
            return false;
        } finally {
            store.recordRead(n);
        }
    }

    private PendingRows open(byte[] from) {
        try {
            return new PendingRows(store, lowerBound, upperBound, from, lastPolled);
        } catch (LetheException e) {
            throw new FlinkRuntimeException("Failed to read timers from Lethe", e);
        }
    }

    private static void advance(PendingRows rows) {
        try {
            rows.next();
        } catch (LetheException e) {
            throw new FlinkRuntimeException("Failed to read timers from Lethe", e);
        }
    }
}
