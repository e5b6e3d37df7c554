package io.lethe.engine;

import io.lethe.engine.internal.Native;

import java.util.List;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * A copy of a database begun by {@link LetheDb#beginCheckpoint}: its table files are linked, its
 * memtables taken. {@link #finish()} writes those memtables and the manifest; {@link #close()}
 * before that abandons the copy and removes its directory. Closing the database closes it too.
 *
 * <p>The memtables are written as images, one per column family that held data ({@link
 * #imageCount()}). {@link #writeImage} writes one ahead of {@link #finish()}, which writes the
 * rest: several threads may write distinct images at once, and move each image's files away as
 * soon as they are written while others still are.
 *
 * <p>Thread-safe: images, finish and close may come from different threads; close and finish wait
 * for the images being written.
 */
public final class PendingCheckpoint implements AutoCloseable {
    private final LetheDb owner;
    private final String dir;
    /** Shared by image writers, exclusive for finish and close (which frees the handle). */
    private final ReadWriteLock lock = new ReentrantReadWriteLock();
    private volatile long nativeHandle;
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
     * The images of memtables the copy took: one per column family whose memtables held data.
     *
     * @throws IllegalStateException if it was closed or the database closed
     */
    public int imageCount() {
        return shared(() -> Native.checkpointImages(nativeHandle()));
    }

    /**
     * Writes image {@code image} (below {@link #imageCount()}) into the copy as table files, at
     * most once and before {@link #finish()}; other images may be written at the same time.
     *
     * @return the names of its files, relative to {@link #directory()}
     * @throws LetheException if it fails, was written already, or there is no such image
     * @throws IllegalStateException if it was closed or the database closed
     */
    public List<String> writeImage(int image) throws LetheException {
        return List.of(shared(() -> Native.writeCheckpointImage(nativeHandle(), image)));
    }

    /**
     * Completes the copy: writes the images not written yet and the manifest; openable on return,
     * and durable unless it was begun without durability. At most once.
     *
     * @throws IllegalStateException if it was closed, already finished, or the database closed
     */
    public void finish() throws LetheException {
        lock.writeLock().lock();
        try {
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
        } finally {
            lock.writeLock().unlock();
        }
    }

    /** Frees it; unfinished, its directory is removed. Idempotent. */
    @Override
    public void close() {
        lock.writeLock().lock();
        try {
            owner.releaseCheckpoint(this);
        } finally {
            lock.writeLock().unlock();
        }
    }

    /** A call on the native copy while it cannot be freed. */
    private <T, E extends Exception> T shared(NativeCall<T, E> call) throws E {
        lock.readLock().lock();
        try {
            owner.guard().acquire();
            try {
                return call.run();
            } finally {
                owner.guard().release();
            }
        } finally {
            lock.readLock().unlock();
        }
    }

    @FunctionalInterface
    private interface NativeCall<T, E extends Exception> {
        T run() throws E;
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
