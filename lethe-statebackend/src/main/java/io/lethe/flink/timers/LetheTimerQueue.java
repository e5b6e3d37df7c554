package io.lethe.flink.timers;

import io.lethe.engine.LetheException;

import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.runtime.state.KeyExtractorFunction;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupedInternalPriorityQueue;
import org.apache.flink.runtime.state.Keyed;
import org.apache.flink.runtime.state.PriorityComparable;
import org.apache.flink.runtime.state.PriorityComparator;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueElement;
import org.apache.flink.runtime.state.heap.KeyGroupPartitionedPriorityQueue;
import org.apache.flink.streaming.api.operators.InternalTimer;
import org.apache.flink.util.CloseableIterator;
import org.apache.flink.util.FlinkRuntimeException;

import java.util.Collection;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * A timer queue kept in the engine: one {@link LetheTimerSet} per key group under Flink's
 * {@code KeyGroupPartitionedPriorityQueue}, all on one {@link TimerStore}. Besides the queue
 * operations it moves the store's horizon up to its head, so that fired timers leave the engine.
 * Not thread-safe: the task thread owns it.
 */
public final class LetheTimerQueue<T extends HeapPriorityQueueElement & PriorityComparable<? super T> & Keyed<?>>
        implements KeyGroupedInternalPriorityQueue<T> {
    private final TimerStore store;
    private final RowCodec<T> codec;
    private final KeyGroupRange range;
    private final LetheTimerSet<?>[] sets;
    private final KeyGroupPartitionedPriorityQueue<T, LetheTimerSet<T>> queue;
    /** Polls between two moves of the horizon (snapshots move it too). */
    static final int EXPIRE_EVERY_POLLS = 1 << 16;
    private int pollsSinceExpiry;

    /**
     * @param lastPolled per key group, the largest row it had polled (restored; may be empty)
     * @param cacheSize rows each key group caches on the heap
     */
    public LetheTimerQueue(TimerStore store, TypeSerializer<T> serializer, KeyGroupRange range, int totalKeyGroups,
            int cacheSize, Map<Integer, byte[]> lastPolled) {
        this(store, serializer, range, totalKeyGroups, cacheSize, lastPolled,
                KeyExtractorFunction.forKeyedObjects(), PriorityComparator.forPriorityComparableObjects());
    }

    /** With the key extractor and comparator given (tests use elements of their own). */
    LetheTimerQueue(TimerStore store, TypeSerializer<T> serializer, KeyGroupRange range, int totalKeyGroups,
            int cacheSize, Map<Integer, byte[]> lastPolled, KeyExtractorFunction<T> keys,
            PriorityComparator<T> order) {
        this.store = store;
        this.codec = new RowCodec<>(serializer, store.keyGroupPrefixBytes());
        this.range = range;
        this.sets = new LetheTimerSet<?>[range.getNumberOfKeyGroups()];
        KeyGroupPartitionedPriorityQueue.PartitionQueueSetFactory<T, LetheTimerSet<T>> factory =
                (keyGroup, n, k, c) -> newSet(keyGroup, cacheSize, lastPolled.get(keyGroup));
        this.queue = new KeyGroupPartitionedPriorityQueue<>(keys, order, factory, range, totalKeyGroups);
    }

    private LetheTimerSet<T> newSet(int keyGroup, int cacheSize, byte[] lastPolled) {
        LetheTimerSet<T> set = new LetheTimerSet<>(store, codec, keyGroup, cacheSize, lastPolled);
        sets[keyGroup - range.getStartKeyGroup()] = set;
        return set;
    }

    /** Counts the pending timers from now on (reads every one of them once). */
    void startCounting() {
        long pending = 0;
        for (LetheTimerSet<?> set : sets) {
            pending += set.size();
        }
        store.startCounting(pending);
    }

    public TimerStore store() {
        return store;
    }

    /**
     * Moves the horizon up to the head's time (past the last polled time when empty): every polled
     * timer below it leaves the engine. Flushes the buffered writes first.
     */
    public void expirePolled() throws LetheException {
        pollsSinceExpiry = 0;
        store.expirePolled(store.timeOrdered() ? headTime() : null);
    }

    /** The time of the head as an unsigned delete key (null if empty). */
    private Long headTime() {
        T head = queue.peek();
        if (head == null) {
            return null;
        }
        if (head instanceof InternalTimer<?, ?> timer) {
            return timer.getTimestamp() ^ Long.MIN_VALUE; // the sign bit flipped, as the row has it
        }
        return store.timeOf(codec.row(range.getStartKeyGroup(), head));
    }

    /**
     * Per key group, the largest row it polled that the horizon may not have removed yet: what a
     * restored queue must know to skip them. Call after {@link #expirePolled()}.
     */
    public Map<Integer, byte[]> polledAboveHorizon() {
        Map<Integer, byte[]> result = new TreeMap<>();
        for (int i = 0; i < sets.length; i++) {
            byte[] last = sets[i].lastPolled();
            if (last != null && Long.compareUnsigned(store.timeOf(last), store.horizon()) >= 0) {
                result.put(range.getStartKeyGroup() + i, last);
            }
        }
        return result;
    }

    @Override
    public T poll() {
        T polled = queue.poll();
        if (polled == null) {
            return null;
        }
        if (store.timeOrdered()) {
            store.publishHorizon(headTime());
        }
        if (++pollsSinceExpiry >= EXPIRE_EVERY_POLLS) {
            try {
                expirePolled();
            } catch (LetheException e) {
                throw new FlinkRuntimeException("Failed to move the horizon of Lethe's timers", e);
            }
        }
        return polled;
    }

    @Override
    public T peek() {
        return queue.peek();
    }

    @Override
    public boolean add(T element) {
        return queue.add(element);
    }

    @Override
    public boolean remove(T element) {
        return queue.remove(element);
    }

    @Override
    public boolean isEmpty() {
        return queue.isEmpty();
    }

    @Override
    public int size() {
        return queue.size();
    }

    @Override
    public void addAll(Collection<? extends T> elements) {
        queue.addAll(elements);
    }

    @Override
    public CloseableIterator<T> iterator() {
        return queue.iterator();
    }

    @Override
    public Set<T> getSubsetForKeyGroup(int keyGroupId) {
        return queue.getSubsetForKeyGroup(keyGroupId);
    }
}
