package io.lethe.engine;

import io.lethe.engine.internal.Native;
import io.lethe.engine.internal.NativeLibrary;

/**
 * One memory budget for several databases, for example every engine of one Flink slot. Each
 * database opened with it ({@link DbOptions.Builder#memoryBudget}) shares one page cache, and its
 * write buffers and open tables' index and filters count against the same capacity:
 *
 * <ul>
 *   <li>write buffers take at most {@code writeBufferRatio} of the capacity; past that, the database
 *       holding the largest memtable flushes it;
 *   <li>open tables' index, filters and tombstones count in full. By default every table stays open
 *       for good: their memory squeezes the page cache and may take the budget past its capacity.
 *       With {@code boundTableReaders}, tables stay open for good while they take at most half of
 *       what the write buffers leave, and later ones go through a table cache of three quarters of
 *       it, bounded by bytes: a strict bound, but a table that left the cache is opened again (its
 *       whole index and filters read) on its next use;
 *   <li>the page cache gets the rest, at least an eighth of the capacity.
 * </ul>
 *
 * <p>Thread-safe. {@link #close()} lets go of this handle; databases opened with the budget keep it
 * until they close.
 */
public final class MemoryBudget implements AutoCloseable {
    private final long capacityBytes;
    private long handle; // guarded by this; 0 once closed

    private MemoryBudget(long capacityBytes, long handle) {
        this.capacityBytes = capacityBytes;
        this.handle = handle;
    }

    /**
     * A budget of {@code capacityBytes} (at least 64 KiB), of which write buffers take at most {@code
     * writeBufferRatio} (in (0, 1)); every open table stays open.
     */
    public static MemoryBudget create(long capacityBytes, double writeBufferRatio) throws LetheException {
        return create(capacityBytes, writeBufferRatio, false);
    }

    /** As {@link #create(long, double)}, with open tables bounded or not (see the class comment). */
    public static MemoryBudget create(long capacityBytes, double writeBufferRatio, boolean boundTableReaders)
            throws LetheException {
        ColumnFamilyOptions.checkLong(capacityBytes, 64L << 10, 1L << 50, "capacityBytes");
        if (!(writeBufferRatio > 0 && writeBufferRatio < 1)) {
            throw new IllegalArgumentException("writeBufferRatio must be in (0, 1): " + writeBufferRatio);
        }
        NativeLibrary.ensureLoaded();
        return new MemoryBudget(capacityBytes,
                Native.newMemoryBudget(capacityBytes, writeBufferRatio, boundTableReaders));
    }

    public long capacityBytes() {
        return capacityBytes;
    }

    /** What the budget holds now, over every database on it. */
    public synchronized Usage usage() {
        if (handle == 0) {
            throw new IllegalStateException("memory budget closed");
        }
        long[] u = Native.memoryBudgetUsage(handle);
        return new Usage(u[0], u[1], u[2], u[3], u[4]);
    }

    /** The native handle for an open call, which must run while this lock is held. */
    synchronized long handleForOpen() {
        if (handle == 0) {
            throw new IllegalStateException("memory budget closed");
        }
        return handle;
    }

    @Override
    public synchronized void close() {
        if (handle != 0) {
            Native.closeMemoryBudget(handle);
            handle = 0;
        }
    }

    /**
     * A budget's use, in bytes.
     *
     * @param capacity the budget's capacity
     * @param writeBuffers memtables of every database, flushed or not yet
     * @param tableReaders open tables' index, filters and range tombstones
     * @param pinnedTableReaders the part of those kept open for good
     * @param pageCache decoded pages held
     */
    public record Usage(long capacity, long writeBuffers, long tableReaders, long pinnedTableReaders,
            long pageCache) {
        /** Everything the budget counts. */
        public long total() {
            return writeBuffers + tableReaders + pageCache;
        }
    }
}
