package io.lethe.engine;

import java.util.Objects;

/**
 * Options of a database, fixed at open. Immutable; build with {@link #builder()}. Mirrors {@code
 * lethe::Options}; encoded once into a {@code long[]} for the native open call.
 */
public final class DbOptions {
    /** Layout version of the encoded form; the native side rejects other versions. */
    static final long ENCODING_VERSION = 8;

    static final int ENCODED_DB_LONGS = 15;

    private final boolean createIfMissing;
    private final boolean errorIfExists;
    private final long writeBufferSizeBytes;
    private final long pageCacheBytes;
    private final int maxOpenFiles;
    private final boolean useWal;
    private final boolean walChecksums;
    private final boolean verifyChecksums;
    private final boolean backgroundCompactions;
    private final boolean avoidBlindDeletes;
    private final boolean compactInMemory;
    private final int multiGetThreads;
    private final long heapTrimIntervalMillis;
    private final MemoryBudget memoryBudget;
    private final ColumnFamilyOptions defaultColumnFamilyOptions;

    private DbOptions(Builder b) {
        this.createIfMissing = b.createIfMissing;
        this.errorIfExists = b.errorIfExists;
        this.writeBufferSizeBytes = b.writeBufferSizeBytes;
        this.pageCacheBytes = b.pageCacheBytes;
        this.maxOpenFiles = b.maxOpenFiles;
        this.useWal = b.useWal;
        this.walChecksums = b.walChecksums;
        this.verifyChecksums = b.verifyChecksums;
        this.backgroundCompactions = b.backgroundCompactions;
        this.avoidBlindDeletes = b.avoidBlindDeletes;
        this.compactInMemory = b.compactInMemory;
        this.multiGetThreads = b.multiGetThreads;
        this.heapTrimIntervalMillis = b.heapTrimIntervalMillis;
        this.memoryBudget = b.memoryBudget;
        this.defaultColumnFamilyOptions = b.defaultColumnFamilyOptions;
    }

    public static Builder builder() {
        return new Builder();
    }

    public boolean useWal() {
        return useWal;
    }

    public boolean compactInMemory() {
        return compactInMemory;
    }

    public long writeBufferSizeBytes() {
        return writeBufferSizeBytes;
    }

    public long pageCacheBytes() {
        return pageCacheBytes;
    }

    /** The shared budget, or null (then the write buffer and page cache sizes apply). */
    public MemoryBudget memoryBudget() {
        return memoryBudget;
    }

    public int multiGetThreads() {
        return multiGetThreads;
    }

    public long heapTrimIntervalMillis() {
        return heapTrimIntervalMillis;
    }

    public int maxOpenFiles() {
        return maxOpenFiles;
    }

    public ColumnFamilyOptions defaultColumnFamilyOptions() {
        return defaultColumnFamilyOptions;
    }

    /**
     * The encoded form; {@code budgetHandle} is the memory budget's native handle (0: none), live
     * for the open call.
     */
    long[] encode(long budgetHandle) {
        long[] r = new long[ENCODED_DB_LONGS + ColumnFamilyOptions.ENCODED_LONGS];
        r[0] = ENCODING_VERSION;
        r[1] = createIfMissing ? 1 : 0;
        r[2] = errorIfExists ? 1 : 0;
        r[3] = writeBufferSizeBytes;
        r[4] = pageCacheBytes;
        r[5] = maxOpenFiles;
        r[6] = useWal ? 1 : 0;
        r[7] = walChecksums ? 1 : 0;
        r[8] = verifyChecksums ? 1 : 0;
        r[9] = backgroundCompactions ? 1 : 0;
        r[10] = avoidBlindDeletes ? 1 : 0;
        r[11] = multiGetThreads;
        r[12] = budgetHandle;
        r[13] = heapTrimIntervalMillis * 1000;
        r[14] = compactInMemory ? 1 : 0;
        defaultColumnFamilyOptions.encodeTo(r, ENCODED_DB_LONGS);
        return r;
    }

    /** Builder with the engine's defaults. */
    public static final class Builder {
        private boolean createIfMissing = true;
        private boolean errorIfExists = false;
        private long writeBufferSizeBytes = 64L << 20;
        private long pageCacheBytes = 32L << 20;
        private int maxOpenFiles = -1;
        private boolean useWal = true;
        private boolean walChecksums = true;
        private boolean verifyChecksums = true;
        private boolean backgroundCompactions = true;
        private boolean avoidBlindDeletes = false;
        private boolean compactInMemory = true;
        private int multiGetThreads = 1;
        private long heapTrimIntervalMillis = 10_000;
        private MemoryBudget memoryBudget;
        private ColumnFamilyOptions defaultColumnFamilyOptions = ColumnFamilyOptions.DEFAULT;

        private Builder() {}

        public Builder createIfMissing(boolean v) {
            this.createIfMissing = v;
            return this;
        }

        public Builder errorIfExists(boolean v) {
            this.errorIfExists = v;
            return this;
        }

        public Builder writeBufferSizeBytes(long v) {
            this.writeBufferSizeBytes = ColumnFamilyOptions.checkLong(v, 4096, 1L << 40, "writeBufferSizeBytes");
            return this;
        }

        /**
         * Shares a memory budget with other databases: its page cache, write buffers and open tables
         * count against it, and pageCacheBytes and maxOpenFiles no longer apply
         * (writeBufferSizeBytes still caps this database's memtables). Null: none.
         */
        public Builder memoryBudget(MemoryBudget v) {
            this.memoryBudget = v;
            return this;
        }

        /**
         * Threads that help a multiGet through a batch of more than 4 distinct keys, beside the
         * caller (0: the caller alone; at most 64).
         */
        public Builder multiGetThreads(int v) {
            this.multiGetThreads = ColumnFamilyOptions.check(v, 0, 64, "multiGetThreads");
            return this;
        }

        /**
         * After flushes and compactions, and when a database closes, the memory the C allocator
         * holds free goes back to the operating system (glibc's malloc_trim), at most once per this
         * many milliseconds across the process (0: never; at most a day). Without it, the buffers
         * that compactions free and a closed database's memory stay resident.
         */
        public Builder heapTrimIntervalMillis(long v) {
            this.heapTrimIntervalMillis = ColumnFamilyOptions.checkLong(v, 0, 86_400_000L, "heapTrimIntervalMillis");
            return this;
        }

        /** Capacity of the page cache when no memory budget is given (0: none). */
        public Builder pageCacheBytes(long v) {
            this.pageCacheBytes = ColumnFamilyOptions.checkLong(v, 0, 1L << 44, "pageCacheBytes");
            return this;
        }

        /**
         * Table files kept open (at least 16), or -1 (the default) to keep every table open:
         * reads then reach a table without the table cache's lock, and each table's index and
         * filters stay in memory while it lives.
         */
        public Builder maxOpenFiles(int v) {
            this.maxOpenFiles = v == -1 ? v : ColumnFamilyOptions.check(v, 16, 1 << 20, "maxOpenFiles");
            return this;
        }

        /** Flink keeps durability through checkpoints and runs without a WAL. */
        public Builder useWal(boolean v) {
            this.useWal = v;
            return this;
        }

        public Builder walChecksums(boolean v) {
            this.walChecksums = v;
            return this;
        }

        public Builder verifyChecksums(boolean v) {
            this.verifyChecksums = v;
            return this;
        }

        /**
         * Before writing a point tombstone, probe the memtables and the files' Bloom filters and
         * write nothing when no version of the key can exist (blind deletes).
         */
        public Builder avoidBlindDeletes(boolean v) {
            this.avoidBlindDeletes = v;
            return this;
        }

        /**
         * Without a WAL: when a memtable fills, first compact it in memory with what earlier ones
         * left there (dropping overwritten versions, deleted keys, entries under the horizon), and
         * keep what survives in memory when it fits a quarter of the write buffers and holds no
         * tombstone; only a larger remainder, one with tombstones, {@code flush} and checkpoints
         * write files. Saves the writes of state that is deleted shortly after it is written
         * (fired windows, cleared state). On by default; ignored with a WAL.
         */
        public Builder compactInMemory(boolean v) {
            this.compactInMemory = v;
            return this;
        }

        public Builder backgroundCompactions(boolean v) {
            this.backgroundCompactions = v;
            return this;
        }

        public Builder defaultColumnFamilyOptions(ColumnFamilyOptions v) {
            this.defaultColumnFamilyOptions = Objects.requireNonNull(v, "defaultColumnFamilyOptions");
            return this;
        }

        public DbOptions build() {
            return new DbOptions(this);
        }
    }
}
