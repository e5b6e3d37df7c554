package io.lethe.engine.internal;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * Guards a native resource: every native call holds a lease, and {@link #closeAndWait()} waits
 * until the calls in flight have returned before the resource is freed. After close, {@link
 * #acquire()} throws {@link IllegalStateException}, so no call ever reaches freed native memory.
 *
 * <p>The state is one atomic long: bit 63 is "closed", the rest counts leases. Thread-safe.
 */
public final class ResourceGuard {
    private static final long CLOSED = Long.MIN_VALUE;

    private final AtomicLong state = new AtomicLong();
    private final String what;
    private volatile Thread closer;

    public ResourceGuard(String what) {
        this.what = what;
    }

    /** Takes a lease; throws {@link IllegalStateException} if the resource is closed. */
    public void acquire() {
        long s = state.incrementAndGet();
        if (s < 0) {
            release();
            throw new IllegalStateException(what + " is closed");
        }
    }

    /** Takes a lease if the resource is open; false (and no lease) if it is closed. */
    public boolean tryAcquire() {
        long s = state.incrementAndGet();
        if (s < 0) {
            release();
            return false;
        }
        return true;
    }

    public void release() {
        long s = state.decrementAndGet();
        if (s == CLOSED) {
            Thread t = closer;
            if (t != null) {
                LockSupport.unpark(t);
            }
        }
    }

    public boolean isClosed() {
        return state.get() < 0;
    }

    /**
     * Marks the resource closed and waits for the leases in flight. Returns false if it was
     * closed already (close is idempotent). Must not be called while holding a lease.
     */
    public boolean closeAndWait() {
        long s;
        do {
            s = state.get();
            if (s < 0) {
                return false;
            }
        } while (!state.compareAndSet(s, s | CLOSED));
        closer = Thread.currentThread();
        while (state.get() != CLOSED) {
            LockSupport.parkNanos(this, 1_000_000L);
        }
        closer = null;
        return true;
    }
}
