package io.lethe.engine;

/**
 * A consistent point-in-time view of a database. Release it with {@link #close()}; closing the
 * database releases it too. Not thread-safe for close, safe for concurrent reads.
 */
public final class Snapshot implements AutoCloseable {
    private final LetheDb owner;
    private final long sequence;
    private long nativeHandle;

    Snapshot(LetheDb owner, long nativeHandle, long sequence) {
        this.owner = owner;
        this.nativeHandle = nativeHandle;
        this.sequence = sequence;
    }

    /** The sequence number the snapshot reads at. */
    public long sequence() {
        return sequence;
    }

    LetheDb owner() {
        return owner;
    }

    /** The native handle; throws {@link IllegalStateException} once released. */
    long nativeHandle() {
        long h = nativeHandle;
        if (h == 0) {
            throw new IllegalStateException("snapshot was released");
        }
        return h;
    }

    boolean isReleased() {
        return nativeHandle == 0;
    }

    @Override
    public void close() {
        owner.releaseSnapshot(this);
    }

    /** Called by the database with its guard held; idempotent. */
    long takeHandle() {
        long h = nativeHandle;
        nativeHandle = 0;
        return h;
    }
}
