package io.lethe.engine.internal;

import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;

/**
 * Guards a native resource: every native call holds a lease, and {@link #closeAndWait()} waits
 * until the calls in flight have returned before the resource is freed. After close, {@link
 * #acquire()} throws {@link IllegalStateException}, so no call ever reaches freed native memory.
 *
 * <p>Leases are counted in stripes, one cache line each, picked by thread, so that threads calling
 * at once do not contend on one counter; close sums them. A lease takes its stripe's count up
 * before it reads "closed", and close sets "closed" before it reads the counts, so either the
 * lease sees the close or the close sees the lease. A lease must be released on the thread that
 * took it. Thread-safe.
 */
public final class ResourceGuard {
    private static final int STRIPES = 16;
    /** Longs per stripe: 128 bytes apart, so no two stripes share a cache line or its neighbour. */
    private static final int SPACING = 16;

    private final AtomicLongArray leases = new AtomicLongArray(STRIPES * SPACING);
    private final String what;
    private volatile boolean closed;
    private volatile Thread closer;

    public ResourceGuard(String what) {
        this.what = what;
    }

    /** Takes a lease; throws {@link IllegalStateException} if the resource is closed. */
    public void acquire() {
        if (!tryAcquire()) {
            throw new IllegalStateException(what + " is closed");
        }
    }

    /** Takes a lease if the resource is open; false (and no lease) if it is closed. */
    public boolean tryAcquire() {
        leases.incrementAndGet(stripe());
        if (closed) {
            release();
            return false;
        }
        return true;
    }

    public void release() {
        leases.decrementAndGet(stripe());
        if (closed) {
            Thread t = closer;
            if (t != null) {
                LockSupport.unpark(t);
            }
        }
    }

    public boolean isClosed() {
        return closed;
    }

    /**
     * Marks the resource closed and waits for the leases in flight. Returns false if it was
     * closed already (close is idempotent). Must not be called while holding a lease.
     */
    public boolean closeAndWait() {
        synchronized (this) {
            if (closed) {
                return false;
            }
            closed = true;
        }
        closer = Thread.currentThread();
        while (leasesHeld() != 0) {
            LockSupport.parkNanos(this, 1_000_000L);
        }
        closer = null;
        return true;
    }

    private long leasesHeld() {
        long n = 0;
        for (int i = 0; i < STRIPES; i++) {
            n += leases.get(i * SPACING);
        }
        return n;
    }

    private static int stripe() {
        return (int) (Thread.currentThread().getId() & (STRIPES - 1)) * SPACING;
    }
}
