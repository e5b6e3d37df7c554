package io.lethe.engine.internal;

import io.lethe.engine.LetheException;

/**
 * Every native method of the engine binding (lethe-native/jni/lethe_jni.cc). Handles are native
 * pointers; callers guarantee they are live (see {@link ResourceGuard}). Failures throw {@link
 * LetheException}; nothing here returns an error code.
 */
public final class Native {
    private Native() {}

    // Database.
    public static native long open(String path, long[] options) throws LetheException;

    public static native void closeDb(long db);

    // Memory budgets.
    public static native long newMemoryBudget(long capacityBytes, double writeBufferRatio, boolean boundTableReaders)
            throws LetheException;

    /** capacity, write buffers, table readers, pinned table readers, page cache. */
    public static native long[] memoryBudgetUsage(long budget);

    public static native void closeMemoryBudget(long budget);

    /** {mapped, in use, free} bytes of the C allocator's heaps. */
    public static native long[] heapUsage();

    public static native long defaultColumnFamily(long db);

    public static native long createColumnFamily(long db, String name, long[] options) throws LetheException;

    public static native void dropColumnFamily(long db, long cf) throws LetheException;

    /** Handles of the live column families, default first. */
    public static native long[] listColumnFamilies(long db);

    public static native int columnFamilyId(long cf);

    public static native String columnFamilyName(long cf);

    // Point operations. Write flags: 1 = sync, 2 = disable WAL.
    /**
     * Reads a key; snapshotSequence is -1 for the latest state. Snapshots cross as sequence numbers,
     * never as pointers, so a snapshot released concurrently cannot be dereferenced. With
     * hasDeleteKey, every entry of the key was written with deleteKey (the engine's
     * ReadOptions::delete_key).
     */
    public static native byte[] get(long db, long cf, byte[] key, long snapshotSequence, boolean fillCache,
            long[] deleteKeyOut, boolean hasDeleteKey, long deleteKey) throws LetheException;

    /**
     * Looks up a batch of n keys, packed in keys (key i ends at keyEnds[i]). Value i is written to
     * the returned array (values, or a larger new one) at valueStarts[i], valueLengths[i] bytes
     * long, or valueLengths[i] is -1 if the key has no value; deleteKeys (may be null) receives
     * each value's delete key.
     */
    public static native byte[] multiGet(long db, long cf, long snapshotSequence, boolean fillCache, byte[] keys,
            int[] keyEnds, int n, byte[] values, int[] valueStarts, int[] valueLengths, long[] deleteKeys)
            throws LetheException;

    public static native void put(long db, long cf, byte[] key, byte[] value, long deleteKey, int flags)
            throws LetheException;

    public static native void delete(long db, long cf, byte[] key, int flags) throws LetheException;

    public static native void deleteRange(long db, long cf, byte[] begin, byte[] end, int flags)
            throws LetheException;

    public static native void deleteByDeleteKey(long db, long cf, long lo, long hi) throws LetheException;

    public static native void advanceHorizon(long db, long cf, long horizon) throws LetheException;

    public static native long horizon(long db, long cf) throws LetheException;

    public static native void merge(long db, long cf, byte[] key, byte[] operand, long deleteKey, int flags)
            throws LetheException;

    public static native void write(long db, byte[] batch, int length, int flags) throws LetheException;

    // Snapshots.
    public static native long getSnapshot(long db);

    public static native long snapshotSequence(long snapshot);

    public static native void releaseSnapshot(long db, long snapshot);

    // Iterators.
    public static native long newIterator(long db, long cf, long snapshotSequence, byte[] lower, byte[] upper,
            boolean fillCache) throws LetheException;

    /**
     * Positions the iterator (op 0: first, 1: seek to target, 2: continue) and copies up to
     * maxEntries entries into buffer as [int keyLen][int valueLen][long deleteKey][key][value],
     * little endian. Returns (entries copied << 1) | 1 if the iterator reached its end, or
     * (entries copied << 1) if more may follow; if the next entry does not fit into the empty
     * buffer, returns minus its encoded size and stays at that entry.
     */
    public static native int iteratorFill(long iterator, int op, byte[] target, byte[] buffer, int maxEntries)
            throws LetheException;

    public static native void closeIterator(long iterator);

    // Maintenance.
    public static native void flush(long db) throws LetheException;

    public static native void syncWal(long db) throws LetheException;

    public static native void compactAll(long db) throws LetheException;

    public static native void waitForBackgroundWork(long db) throws LetheException;

    public static native void checkpoint(long db, String dir) throws LetheException;

    /** A checkpoint begun (lethe::PendingCheckpoint); finished or released exactly once, before the db closes. */
    public static native long beginCheckpoint(long db, String dir, boolean sync, boolean flushFirst)
            throws LetheException;

    /** Memtable images of a checkpoint: one per column family whose memtables held data. */
    public static native int checkpointImages(long checkpoint);

    /** Writes image i; its table files' names, relative to the copy's directory. Distinct images at once. */
    public static native String[] writeCheckpointImage(long checkpoint, int image) throws LetheException;

    public static native void finishCheckpoint(long checkpoint) throws LetheException;

    /** Frees it; unfinished, its directory is removed. */
    public static native void releaseCheckpoint(long checkpoint);

    /** Per file: name, size and "1" if immutable, flattened. */
    public static native String[] liveFiles(long db, boolean flush) throws LetheException;

    /** Statistics as a flat array (layout in io.lethe.engine.Statistics#decode). */
    public static native long[] statistics(long db);

    public static native String property(long db, long cf, String name);

    // Test support.
    /** Throws the LetheException for the given status code through the native error path. */
    public static native void raiseStatus(int code, String message) throws LetheException;

    /** Native objects (databases, snapshots, iterators) currently allocated by this library. */
    public static native long liveObjects();
}
