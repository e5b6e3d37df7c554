package io.lethe.engine;

import io.lethe.engine.internal.Native;

/**
 * A copy of a database begun by {@link LetheDb#beginCheckpoint}: its table files are linked, its
 * memtables taken. {@link #finish()} writes those memtables and the manifest; {@link #close()}
 * before that abandons the copy and removes its directory. Closing the database closes it too.
 * Thread-safe: finish and close may come from different threads.
 */
public final class PendingCheckpoint implements AutoCloseable {
    private final LetheDb owner;
    private final String dir;
    private long nativeHandle;
    private boolean finished;

    PendingCheckpoint(LetheDb owner, long nativeHandle, String dir) {
        this.owner = owner;
        this.nativeHandle = nativeHandle;
        this.dir = dir;
    }

    /** The copy's directory. */
    public String directory() {
        return dir;
    }

    /**
     * Completes the copy: openable on return, and durable unless it was begun without durability.
     * At most once.
     *
     * @throws IllegalStateException if it was closed, already finished, or the database closed
     */
    public synchronized void finish() throws LetheException {
        if (finished) {
            throw new IllegalStateException("checkpoint " + dir + " is already finished");
        }
        owner.guard().acquire();
        try {
            Native.finishCheckpoint(nativeHandle());
            finished = true;
        } finally {
            owner.guard().release();
        }
        owner.releaseCheckpoint(this);  // its memtables and files need not stay pinned
    }

    /** Frees it; unfinished, its directory is removed. Idempotent. */
    @Override
    public synchronized void close() {
        owner.releaseCheckpoint(this);
    }

    private long nativeHandle() {
        long h = nativeHandle;
        if (h == 0) {
            throw new IllegalStateException("checkpoint " + dir + " was closed");
        }
        return h;
    }

    /** Called by the database with its guard held; idempotent. */
    long takeHandle() {
        long h = nativeHandle;
        nativeHandle = 0;
        return h;
    }
}
