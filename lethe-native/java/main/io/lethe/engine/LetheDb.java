package io.lethe.engine;

import io.lethe.engine.internal.Native;
import io.lethe.engine.internal.NativeLibrary;
import io.lethe.engine.internal.ResourceGuard;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * An open Lethe database: a persistent key-value store with one LSM tree per column family and
 * files in the KiWi layout. Every entry carries a 64-bit delete key ({@link #MAX_DELETE_KEY}:
 * never expires).
 *
 * <p>Thread-safe. {@link #close()} is idempotent, waits for calls in flight, then closes the
 * iterators, snapshots and pending checkpoints made by this database. Any use after close throws {@link
 * IllegalStateException} without reaching native code. Keys and values are never retained: the
 * arrays may be reused after a call returns.
 */
public final class LetheDb implements AutoCloseable {
    /** The delete key of entries that never expire by delete key (unsigned 2^64 - 1). */
    public static final long MAX_DELETE_KEY = -1L;
    /** Largest key accepted, as in the engine. */
    public static final int MAX_KEY_BYTES = 64 << 20;

    private final String path;
    private final ResourceGuard guard;
    private final long handle;
    private final Map<Integer, ColumnFamilyHandle> columnFamilies = new ConcurrentHashMap<>();
    private final Set<LetheIterator> iterators = ConcurrentHashMap.newKeySet();
    private final Set<Snapshot> snapshots = ConcurrentHashMap.newKeySet();
    private final Set<PendingCheckpoint> checkpoints = ConcurrentHashMap.newKeySet();
    private final ColumnFamilyHandle defaultColumnFamily;

    private LetheDb(String path, long handle) {
        this.path = path;
        this.handle = handle;
        this.guard = new ResourceGuard("database " + path);
        for (long cf : Native.listColumnFamilies(handle)) {
            ColumnFamilyHandle h = wrap(cf);
            columnFamilies.put(h.id(), h);
        }
        this.defaultColumnFamily = columnFamilies.get(0);
    }

    /** Opens (or creates, per the options) the database in directory {@code path}. */
    public static LetheDb open(String path, DbOptions options) throws LetheException {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(options, "options");
        NativeLibrary.ensureLoaded();
        MemoryBudget budget = options.memoryBudget();
        if (budget == null) {
            return new LetheDb(path, Native.open(path, options.encode(0)));
        }
        synchronized (budget) { // not closed while the open call uses its handle
            return new LetheDb(path, Native.open(path, options.encode(budget.handleForOpen())));
        }
    }

    public String path() {
        return path;
    }

    public ColumnFamilyHandle defaultColumnFamily() {
        ensureOpen();
        return defaultColumnFamily;
    }

    public ColumnFamilyHandle createColumnFamily(String name, ColumnFamilyOptions options) throws LetheException {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(options, "options");
        guard.acquire();
        try {
            ColumnFamilyHandle h = wrap(Native.createColumnFamily(handle, name, options.encode()));
            columnFamilies.put(h.id(), h);
            return h;
        } finally {
            guard.release();
        }
    }

    public void dropColumnFamily(ColumnFamilyHandle cf) throws LetheException {
        long cfHandle = checkColumnFamily(cf);
        guard.acquire();
        try {
            Native.dropColumnFamily(handle, cfHandle);
            cf.markDropped();
            columnFamilies.remove(cf.id());
        } finally {
            guard.release();
        }
    }

    /** The live column families, the default one first. */
    public List<ColumnFamilyHandle> columnFamilies() {
        ensureOpen();
        List<ColumnFamilyHandle> r = new ArrayList<>(columnFamilies.values());
        r.sort((a, b) -> Integer.compare(a.id(), b.id()));
        return r;
    }

    /** The live column family with this name, or null. */
    public ColumnFamilyHandle columnFamily(String name) {
        ensureOpen();
        for (ColumnFamilyHandle h : columnFamilies.values()) {
            if (h.name().equals(name)) {
                return h;
            }
        }
        return null;
    }

    // ---- Reads.

    /** The value of key, or null if it has none. */
    public byte[] get(ColumnFamilyHandle cf, byte[] key) throws LetheException {
        return get(ReadOptions.DEFAULT, cf, key);
    }

    public byte[] get(ReadOptions options, ColumnFamilyHandle cf, byte[] key) throws LetheException {
        return get(options, cf, key, null);
    }

    /**
     * The value of key, or null; if deleteKeyOut is given and the key has a value, its first element
     * receives the value's delete key.
     */
    public byte[] get(ReadOptions options, ColumnFamilyHandle cf, byte[] key, long[] deleteKeyOut)
            throws LetheException {
        Objects.requireNonNull(options, "options");
        checkKey(key);
        if (deleteKeyOut != null && deleteKeyOut.length < 1) {
            throw new IllegalArgumentException("deleteKeyOut must have room for one element");
        }
        long cfHandle = checkColumnFamily(cf);
        long seq = snapshotSequence(options.snapshot());
        return guardedGet(cfHandle, key, seq, options.fillCache(), deleteKeyOut, false, 0);
    }

    /**
     * The value of key, or null, for a key every value and merge operand of which was written with
     * deleteKey (a window store's entry carries its window's start): files that hold neither an entry
     * of that delete key nor a tombstone are not read, as a lookup of a window not stored yet would
     * otherwise probe every file's filter. An entry of the key written with another delete key may go
     * unseen.
     */
    public byte[] getWithDeleteKey(ColumnFamilyHandle cf, byte[] key, long deleteKey) throws LetheException {
        checkKey(key);
        long cfHandle = checkColumnFamily(cf);
        return guardedGet(cfHandle, key, snapshotSequence(null), true, null, true, deleteKey);
    }

    private byte[] guardedGet(long cfHandle, byte[] key, long seq, boolean fillCache, long[] deleteKeyOut,
            boolean hasDeleteKey, long deleteKey) throws LetheException {
        guard.acquire();
        try {
            return Native.get(handle, cfHandle, key, seq, fillCache, deleteKeyOut, hasDeleteKey, deleteKey);
        } finally {
            guard.release();
        }
    }

    /**
     * Looks up every key of the batch in one call into the engine, at one sequence (one consistent
     * view), and leaves the results in the batch. Keys may repeat and come in any order.
     */
    public void multiGet(ReadOptions options, ColumnFamilyHandle cf, MultiGetBatch batch) throws LetheException {
        Objects.requireNonNull(options, "options");
        Objects.requireNonNull(batch, "batch");
        long cfHandle = checkColumnFamily(cf);
        long seq = snapshotSequence(options.snapshot());
        guard.acquire();
        try {
            byte[] values = Native.multiGet(handle, cfHandle, seq, options.fillCache(), batch.keys(),
                    batch.keyEnds(), batch.size(), batch.values(), batch.valueStarts(), batch.valueLengths(),
                    batch.deleteKeys());
            batch.lookedUp(values);
        } finally {
            guard.release();
        }
    }

    public void multiGet(ColumnFamilyHandle cf, MultiGetBatch batch) throws LetheException {
        multiGet(ReadOptions.DEFAULT, cf, batch);
    }

    public LetheIterator newIterator(ColumnFamilyHandle cf) throws LetheException {
        return newIterator(ReadOptions.DEFAULT, cf);
    }

    public LetheIterator newIterator(ReadOptions options, ColumnFamilyHandle cf) throws LetheException {
        Objects.requireNonNull(options, "options");
        long cfHandle = checkColumnFamily(cf);
        long seq = snapshotSequence(options.snapshot());
        guard.acquire();
        try {
            long it = Native.newIterator(handle, cfHandle, seq, options.lowerBoundUnsafe(),
                    options.upperBoundUnsafe(), options.fillCache());
            LetheIterator iterator = new LetheIterator(this, it);
            iterators.add(iterator);
            return iterator;
        } finally {
            guard.release();
        }
    }

    public Snapshot getSnapshot() {
        guard.acquire();
        try {
            long s = Native.getSnapshot(handle);
            Snapshot snapshot = new Snapshot(this, s, Native.snapshotSequence(s));
            snapshots.add(snapshot);
            return snapshot;
        } finally {
            guard.release();
        }
    }

    // ---- Writes.

    public void put(ColumnFamilyHandle cf, byte[] key, byte[] value) throws LetheException {
        put(WriteOptions.DEFAULT, cf, key, value, MAX_DELETE_KEY);
    }

    public void put(ColumnFamilyHandle cf, byte[] key, byte[] value, long deleteKey) throws LetheException {
        put(WriteOptions.DEFAULT, cf, key, value, deleteKey);
    }

    public void put(WriteOptions options, ColumnFamilyHandle cf, byte[] key, byte[] value, long deleteKey)
            throws LetheException {
        checkKey(key);
        checkValue(value);
        long cfHandle = checkColumnFamily(cf);
        guard.acquire();
        try {
            Native.put(handle, cfHandle, key, value, deleteKey, options.flags());
        } finally {
            guard.release();
        }
    }

    public void delete(ColumnFamilyHandle cf, byte[] key) throws LetheException {
        delete(WriteOptions.DEFAULT, cf, key);
    }

    public void delete(WriteOptions options, ColumnFamilyHandle cf, byte[] key) throws LetheException {
        checkKey(key);
        long cfHandle = checkColumnFamily(cf);
        guard.acquire();
        try {
            Native.delete(handle, cfHandle, key, options.flags());
        } finally {
            guard.release();
        }
    }

    /** A point delete with a delete key ({@link WriteBatch#delete(ColumnFamilyHandle, byte[], long)}). */
    public void delete(WriteOptions options, ColumnFamilyHandle cf, byte[] key, long deleteKey)
            throws LetheException {
        if (deleteKey == MAX_DELETE_KEY) {
            delete(options, cf, key);
        } else {
            write(options, new WriteBatch(32 + key.length).delete(cf, key, deleteKey));
        }
    }

    /** Deletes every key k with begin <= k < end (unsigned byte order). */
    public void deleteRange(ColumnFamilyHandle cf, byte[] begin, byte[] end) throws LetheException {
        write(WriteOptions.DEFAULT, new WriteBatch(32 + begin.length + end.length).deleteRange(cf, begin, end));
    }

    /**
     * Secondary range delete: removes every value and merge operand of {@code cf} written before this call
     * whose delete key (compared as an unsigned 64-bit number) lies in [{@code lo}, {@code hi}]. Entries with
     * the maximum delete key ({@code -1L}) and point deletes are never removed this way. Reads, iterators and
     * snapshots taken afterwards no longer see the removed entries (a removed entry acts as a point delete of
     * its key); snapshots taken before still do. Whole pages are dropped without being read; the rest goes
     * with compactions within the delete persistence threshold. Durable on return.
     */
    public void deleteByDeleteKey(ColumnFamilyHandle cf, long lo, long hi) throws LetheException {
        if (Long.compareUnsigned(lo, hi) > 0) {
            throw new IllegalArgumentException("lo must not exceed hi (unsigned): " + Long.toUnsignedString(lo)
                    + " > " + Long.toUnsignedString(hi));
        }
        long cfHandle = checkColumnFamily(cf);
        guard.acquire();
        try {
            Native.deleteByDeleteKey(handle, cfHandle, lo, hi);
        } finally {
            guard.release();
        }
    }

    /**
     * Advances the expiry horizon of {@code cf}: every value and merge operand whose delete key (unsigned) is
     * below {@code horizon} is removed, including ones written later. A horizon at or below the current one
     * changes nothing. Part of every checkpoint; durable on return. Relies on delete keys being monotone per
     * key (a newer version never has a smaller delete key).
     */
    public void advanceHorizon(ColumnFamilyHandle cf, long horizon) throws LetheException {
        long cfHandle = checkColumnFamily(cf);
        guard.acquire();
        try {
            Native.advanceHorizon(handle, cfHandle, horizon);
        } finally {
            guard.release();
        }
    }

    /** The current expiry horizon of {@code cf} (0 if none was set). */
    public long horizon(ColumnFamilyHandle cf) throws LetheException {
        long cfHandle = checkColumnFamily(cf);
        guard.acquire();
        try {
            return Native.horizon(handle, cfHandle);
        } finally {
            guard.release();
        }
    }

    /** List append: the value becomes the old value, one ',' byte, then the operand. */
    public void merge(ColumnFamilyHandle cf, byte[] key, byte[] operand, long deleteKey) throws LetheException {
        checkKey(key);
        checkValue(operand);
        long cfHandle = checkColumnFamily(cf);
        guard.acquire();
        try {
            Native.merge(handle, cfHandle, key, operand, deleteKey, WriteOptions.DEFAULT.flags());
        } finally {
            guard.release();
        }
    }

    public void write(WriteOptions options, WriteBatch batch) throws LetheException {
        Objects.requireNonNull(options, "options");
        Objects.requireNonNull(batch, "batch");
        if (batch.count() == 0) {
            ensureOpen();
            return;
        }
        if (batch.owner() != this) {
            throw new IllegalArgumentException("the write batch references column families of another database");
        }
        guard.acquire();
        try {
            Native.write(handle, batch.data(), batch.sizeInBytes(), options.flags());
        } finally {
            guard.release();
        }
    }

    // ---- Maintenance.

    /**
     * Makes every write acknowledged so far durable by syncing the write-ahead log: one commit point
     * for many unsynced writes.
     */
    public void syncWal() throws LetheException {
        guard.acquire();
        try {
            Native.syncWal(handle);
        } finally {
            guard.release();
        }
    }

    /** Writes every memtable to level 0 and waits for it. */
    public void flush() throws LetheException {
        guard.acquire();
        try {
            Native.flush(handle);
        } finally {
            guard.release();
        }
    }

    /** Flushes, then compacts every column family into its deepest level. */
    public void compactAll() throws LetheException {
        guard.acquire();
        try {
            Native.compactAll(handle);
        } finally {
            guard.release();
        }
    }

    public void waitForBackgroundWork() throws LetheException {
        guard.acquire();
        try {
            Native.waitForBackgroundWork(handle);
        } finally {
            guard.release();
        }
    }

    /**
     * Makes an openable, durable copy in {@code dir} (which must not exist), hard-linking table files:
     * {@link #beginCheckpoint(String)} and its finish at once.
     */
    public void checkpoint(String dir) throws LetheException {
        Objects.requireNonNull(dir, "dir");
        guard.acquire();
        try {
            Native.checkpoint(handle, dir);
        } finally {
            guard.release();
        }
    }

    /**
     * Begins a copy in {@code dir} (which must not exist): links the table files and takes the
     * memtables as they are, without flushing them; {@link PendingCheckpoint#finish()} (from any
     * thread, while this database goes on) writes them and completes the copy. See the engine's
     * {@code DB::BeginCheckpoint}. The copy is durable once finished.
     */
    public PendingCheckpoint beginCheckpoint(String dir) throws LetheException {
        return beginCheckpoint(dir, true, false);
    }

    /**
     * As {@link #beginCheckpoint(String)}; without {@code durable}, finishing does not sync the copy:
     * for a copy that is read once and removed (a staging area for an upload), whose bytes then may
     * never reach the device. With {@code flushFirst} the memtables are flushed first, so the copy
     * holds none of them (this call then costs a flush, and finishing writes nothing).
     */
    public PendingCheckpoint beginCheckpoint(String dir, boolean durable, boolean flushFirst) throws LetheException {
        Objects.requireNonNull(dir, "dir");
        guard.acquire();
        try {
            long h = Native.beginCheckpoint(handle, dir, durable, flushFirst);
            PendingCheckpoint checkpoint = new PendingCheckpoint(this, h, dir);
            checkpoints.add(checkpoint);
            return checkpoint;
        } finally {
            guard.release();
        }
    }

    /**
     * The files of the current state: tables (immutable, shareable), the manifest and CURRENT. A
     * background compaction that runs afterwards deletes the tables it replaces: to copy them, take a
     * {@link #checkpoint} instead, which links them.
     */
    public List<LiveFile> liveFiles(boolean flush) throws LetheException {
        String[] flat;
        guard.acquire();
        try {
            flat = Native.liveFiles(handle, flush);
        } finally {
            guard.release();
        }
        List<LiveFile> r = new ArrayList<>(flat.length / 3);
        for (int i = 0; i + 2 < flat.length; i += 3) {
            r.add(new LiveFile(flat[i], Long.parseLong(flat[i + 1]), flat[i + 2].equals("1")));
        }
        return r;
    }

    public Statistics statistics() {
        long[] raw;
        guard.acquire();
        try {
            raw = Native.statistics(handle);
        } finally {
            guard.release();
        }
        return Statistics.decode(raw, id -> {
            ColumnFamilyHandle h = columnFamilies.get(id);
            return h == null ? "#" + id : h.name();
        });
    }

    /** A named engine property ("lethe.stats", "lethe.num-files-at-level0", ...), or null. */
    public String property(ColumnFamilyHandle cf, String name) {
        Objects.requireNonNull(name, "name");
        long cfHandle = checkColumnFamily(cf);
        guard.acquire();
        try {
            return Native.property(handle, cfHandle, name);
        } finally {
            guard.release();
        }
    }

    public boolean isClosed() {
        return guard.isClosed();
    }

    @Override
    public void close() {
        if (!guard.closeAndWait()) {
            return;
        }
        for (LetheIterator it : iterators) {
            Native.closeIterator(it.takeHandle());
        }
        iterators.clear();
        for (Snapshot s : snapshots) {
            Native.releaseSnapshot(handle, s.takeHandle());
        }
        snapshots.clear();
        for (PendingCheckpoint c : checkpoints) {
            Native.releaseCheckpoint(c.takeHandle());
        }
        checkpoints.clear();
        for (ColumnFamilyHandle cf : columnFamilies.values()) {
            cf.markDropped();
        }
        Native.closeDb(handle);
    }

    // ---- Internals shared with iterators, snapshots and batches.

    void releaseSnapshot(Snapshot snapshot) {
        release(snapshots, snapshot, s -> Native.releaseSnapshot(handle, s.takeHandle()));
    }

    void releaseCheckpoint(PendingCheckpoint checkpoint) {
        release(checkpoints, checkpoint, c -> Native.releaseCheckpoint(c.takeHandle()));
    }

    void closeIterator(LetheIterator iterator) {
        release(iterators, iterator, it -> Native.closeIterator(it.takeHandle()));
    }

    /** Frees a child of this database once; a no-op when closing the database freed it. */
    private <T> void release(Set<T> children, T child, java.util.function.Consumer<T> free) {
        if (!guard.tryAcquire()) {
            return;  // closing the database freed it
        }
        try {
            if (children.remove(child)) {
                free.accept(child);
            }
        } finally {
            guard.release();
        }
    }

    ResourceGuard guard() {
        return guard;
    }

    private ColumnFamilyHandle wrap(long cf) {
        return new ColumnFamilyHandle(this, cf, Native.columnFamilyId(cf), Native.columnFamilyName(cf));
    }

    private void ensureOpen() {
        if (guard.isClosed()) {
            throw new IllegalStateException("database " + path + " is closed");
        }
    }

    private long checkColumnFamily(ColumnFamilyHandle cf) {
        Objects.requireNonNull(cf, "column family");
        if (cf.owner() != this) {
            throw new IllegalArgumentException(cf + " belongs to another database");
        }
        ensureOpen();
        if (cf.isDropped()) {
            throw new IllegalStateException(cf + " was dropped");
        }
        return cf.nativeHandle();
    }

    private long snapshotSequence(Snapshot s) {
        if (s == null) {
            return -1;
        }
        if (s.owner() != this) {
            throw new IllegalArgumentException("the snapshot belongs to another database");
        }
        if (s.isReleased()) {
            throw new IllegalStateException("snapshot was released");
        }
        return s.sequence();
    }

    static void checkKey(byte[] key) {
        Objects.requireNonNull(key, "key");
        if (key.length > MAX_KEY_BYTES) {
            throw new IllegalArgumentException("key of " + key.length + " bytes exceeds " + MAX_KEY_BYTES);
        }
    }

    static void checkValue(byte[] value) {
        Objects.requireNonNull(value, "value");
    }
}
