package io.lethe.flink.expiry;

import org.apache.flink.runtime.state.KeyGroupedInternalPriorityQueue;
import org.apache.flink.util.CloseableIterator;

import javax.annotation.Nonnull;
import javax.annotation.Nullable;

import java.util.Collection;
import java.util.Set;

/**
 * A timer queue of the window operator, reporting to the {@link WindowExpiry} what happens to its
 * timers: added, removed, handed out (the timer service polls a timer before running its
 * callback), and every look at the head (the timer service peeks before the next timer, after the
 * previous callback returned). The heap queue underneath does the work, including snapshots and
 * restores.
 */
public final class PolledTimerQueue<T> implements KeyGroupedInternalPriorityQueue<T> {
    private final KeyGroupedInternalPriorityQueue<T> queue;
    private final WindowExpiry window;
    private final WindowExpiry.Domain domain;

    public PolledTimerQueue(KeyGroupedInternalPriorityQueue<T> queue, WindowExpiry window, WindowExpiry.Domain domain) {
        this.queue = queue;
        this.window = window;
        this.domain = domain;
        try (CloseableIterator<T> restored = queue.iterator()) {
            window.restoredTimers(restored, domain);
        } catch (Exception e) {
            window.disable("the restored timers could not be read (" + e + ")");
        }
    }

    @Nullable
    @Override
    public T poll() {
        T timer = queue.poll();
        if (timer != null) {
            window.polled(timer, domain);
        }
        return timer;
    }

    @Nullable
    @Override
    public T peek() {
        T head = queue.peek();
        window.peeked(head, domain);
        return head;
    }

    @Override
    public boolean add(@Nonnull T toAdd) {
        window.added(toAdd, domain);
        return queue.add(toAdd);
    }

    @Override
    public boolean remove(@Nonnull T toRemove) {
        window.removed(toRemove, domain);
        return queue.remove(toRemove);
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
    public void addAll(@Nullable Collection<? extends T> toAdd) {
        queue.addAll(toAdd);
    }

    @Nonnull
    @Override
    public CloseableIterator<T> iterator() {
        return queue.iterator();
    }

    @Nonnull
    @Override
    public Set<T> getSubsetForKeyGroup(int keyGroupId) {
        return queue.getSubsetForKeyGroup(keyGroupId);
    }
}
