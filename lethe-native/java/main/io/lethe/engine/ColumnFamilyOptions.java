package io.lethe.engine;

/**
 * The shape of one column family's LSM tree and files. Immutable; build with {@link #builder()}.
 * Mirrors {@code lethe::ColumnFamilyOptions}.
 */
public final class ColumnFamilyOptions {
    /** Number of longs in the encoded form (see {@link #encodeTo}). */
    static final int ENCODED_LONGS = 16;

    public static final ColumnFamilyOptions DEFAULT = builder().build();

    private final int sizeRatio;
    private final int pageSizeBytes;
    /** {@code pagesPerTile} value that lets the engine choose the delete tile size. */
    public static final int PAGES_PER_TILE_AUTO = 0;

    private final int pagesPerTile;
    private final int bloomBitsPerKey;
    private final long targetFileSizeBytes;
    private final boolean dynamicLevelBytes;
    private final long level1Bytes;
    private final int level0CompactionTrigger;
    private final int level0StopWritesTrigger;
    private final long deletePersistenceThresholdMicros;
    private final FadeFilePick fadeFilePick;
    private final Compression compression;
    /** Null: the same as {@link #compression}. */
    private final Compression bottommostCompression;
    /** Null: the same as {@link #compression}. */
    private final Compression flushCompression;
    private final CompactionStyle compactionStyle;
    private final int timeOrderedMaxFiles;

    /**
     * How FADE's saturation compactions choose a file; mirrors {@code
     * lethe::FadeFilePick}. Delete-driven compactions always take the most overdue file.
     */
    public enum FadeFilePick {
        /** SO: the file overlapping the fewest bytes of the next level. */
        MIN_OVERLAP,
        /** SD: the file with the most invalidated entries. */
        MOST_DELETES,
        /** DD: the file with the oldest tombstone. */
        OLDEST_DELETE
    }

    private ColumnFamilyOptions(Builder b) {
        this.sizeRatio = b.sizeRatio;
        this.pageSizeBytes = b.pageSizeBytes;
        this.pagesPerTile = b.pagesPerTile;
        this.bloomBitsPerKey = b.bloomBitsPerKey;
        this.targetFileSizeBytes = b.targetFileSizeBytes;
        this.dynamicLevelBytes = b.dynamicLevelBytes;
        this.level1Bytes = b.level1Bytes;
        this.level0CompactionTrigger = b.level0CompactionTrigger;
        this.level0StopWritesTrigger = b.level0StopWritesTrigger;
        this.deletePersistenceThresholdMicros = b.deletePersistenceThresholdMicros;
        this.fadeFilePick = b.fadeFilePick;
        this.compression = b.compression;
        this.bottommostCompression = b.bottommostCompression;
        this.flushCompression = b.flushCompression;
        this.compactionStyle = b.compactionStyle;
        this.timeOrderedMaxFiles = b.timeOrderedMaxFiles;
    }

    /** A builder holding these options, to derive options that differ in a few settings. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.sizeRatio = sizeRatio;
        b.pageSizeBytes = pageSizeBytes;
        b.pagesPerTile = pagesPerTile;
        b.bloomBitsPerKey = bloomBitsPerKey;
        b.targetFileSizeBytes = targetFileSizeBytes;
        b.dynamicLevelBytes = dynamicLevelBytes;
        b.level1Bytes = level1Bytes;
        b.level0CompactionTrigger = level0CompactionTrigger;
        b.level0StopWritesTrigger = level0StopWritesTrigger;
        b.deletePersistenceThresholdMicros = deletePersistenceThresholdMicros;
        b.fadeFilePick = fadeFilePick;
        b.compression = compression;
        b.bottommostCompression = bottommostCompression;
        b.flushCompression = flushCompression;
        b.compactionStyle = compactionStyle;
        b.timeOrderedMaxFiles = timeOrderedMaxFiles;
        return b;
    }

    public static Builder builder() {
        return new Builder();
    }

    public int sizeRatio() {
        return sizeRatio;
    }

    public int pageSizeBytes() {
        return pageSizeBytes;
    }

    public int pagesPerTile() {
        return pagesPerTile;
    }

    public int bloomBitsPerKey() {
        return bloomBitsPerKey;
    }

    public long targetFileSizeBytes() {
        return targetFileSizeBytes;
    }

    /**
     * Whether level targets follow the largest level (each level a size ratio's share of the one below, so the last
     * level holds most of the data), rather than growing from level 1's capacity.
     */
    public boolean dynamicLevelBytes() {
        return dynamicLevelBytes;
    }

    /** With dynamic level targets: the most the level receiving level 0 may target. Else level 1's capacity. */
    public long level1Bytes() {
        return level1Bytes;
    }

    /** FADE's delete persistence threshold D_th; zero when FADE is off. */
    public java.time.Duration deletePersistenceThreshold() {
        return java.time.Duration.ofNanos(deletePersistenceThresholdMicros * 1000);
    }

    public FadeFilePick fadeFilePick() {
        return fadeFilePick;
    }

    public Compression compression() {
        return compression;
    }

    /** The compression of files written to the last non-empty level. */
    public Compression bottommostCompression() {
        return bottommostCompression != null ? bottommostCompression : compression;
    }

    /** The compression of the level-0 files flushes write. */
    public Compression flushCompression() {
        return flushCompression != null ? flushCompression : compression;
    }

    public CompactionStyle compactionStyle() {
        return compactionStyle;
    }

    /** With {@link CompactionStyle#TIME_ORDERED}: the most files before neighbours merge whatever their size. */
    public int timeOrderedMaxFiles() {
        return timeOrderedMaxFiles;
    }

    void encodeTo(long[] dst, int offset) {
        dst[offset] = sizeRatio;
        dst[offset + 1] = pageSizeBytes;
        dst[offset + 2] = pagesPerTile;
        dst[offset + 3] = bloomBitsPerKey;
        dst[offset + 4] = targetFileSizeBytes;
        dst[offset + 5] = level1Bytes;
        dst[offset + 6] = level0CompactionTrigger;
        dst[offset + 7] = level0StopWritesTrigger;
        dst[offset + 8] = deletePersistenceThresholdMicros;
        dst[offset + 9] = fadeFilePick.ordinal();
        dst[offset + 10] = compression.ordinal();
        dst[offset + 11] = bottommostCompression != null ? bottommostCompression.ordinal() : -1;
        dst[offset + 12] = dynamicLevelBytes ? 1 : 0;
        dst[offset + 13] = compactionStyle.ordinal();
        dst[offset + 14] = timeOrderedMaxFiles;
        dst[offset + 15] = flushCompression != null ? flushCompression.ordinal() : -1;
    }

    long[] encode() {
        long[] r = new long[ENCODED_LONGS];
        encodeTo(r, 0);
        return r;
    }

    /** Builder with the engine's defaults; every setter validates its argument. */
    public static final class Builder {
        private int sizeRatio = 10;
        private int pageSizeBytes = 4096;
        private int pagesPerTile = 1;
        private int bloomBitsPerKey = 10;
        private long targetFileSizeBytes = 8L << 20;
        private boolean dynamicLevelBytes = false;
        private long level1Bytes = 32L << 20;
        private int level0CompactionTrigger = 4;
        private int level0StopWritesTrigger = 20;
        private long deletePersistenceThresholdMicros = 0;
        private FadeFilePick fadeFilePick = FadeFilePick.MOST_DELETES;
        private Compression compression = Compression.LZ4;
        private Compression bottommostCompression;
        private Compression flushCompression;
        private CompactionStyle compactionStyle = CompactionStyle.LEVELED;
        private int timeOrderedMaxFiles = 128;

        private Builder() {}

        public Builder sizeRatio(int v) {
            this.sizeRatio = check(v, 2, 1000, "sizeRatio");
            return this;
        }

        public Builder pageSizeBytes(int v) {
            this.pageSizeBytes = check(v, 64, 1 << 24, "pageSizeBytes");
            return this;
        }

        /**
         * Pages per delete tile (h): 1 is the classic layout; {@link #PAGES_PER_TILE_AUTO} lets the engine
         * choose h for each new file from the lookups and secondary deletes it observes.
         */
        public Builder pagesPerTile(int v) {
            this.pagesPerTile = check(v, PAGES_PER_TILE_AUTO, 4096, "pagesPerTile");
            return this;
        }

        public Builder bloomBitsPerKey(int v) {
            this.bloomBitsPerKey = check(v, 0, 64, "bloomBitsPerKey");
            return this;
        }

        public Builder targetFileSizeBytes(long v) {
            this.targetFileSizeBytes = checkLong(v, 4096, 1L << 40, "targetFileSizeBytes");
            return this;
        }

        public Builder dynamicLevelBytes(boolean v) {
            this.dynamicLevelBytes = v;
            return this;
        }

        public Builder level1Bytes(long v) {
            this.level1Bytes = checkLong(v, 4096, 1L << 50, "level1Bytes");
            return this;
        }

        public Builder level0CompactionTrigger(int v) {
            this.level0CompactionTrigger = check(v, 1, 1000, "level0CompactionTrigger");
            return this;
        }

        public Builder level0StopWritesTrigger(int v) {
            this.level0StopWritesTrigger = check(v, 1, 10000, "level0StopWritesTrigger");
            return this;
        }

        /**
         * FADE: every tombstone is physically gone from every file, with what it deletes, within
         * this time of its write (also when writes stop; live snapshots may hold tombstones
         * back). Zero turns FADE off; otherwise at least one millisecond.
         */
        public Builder deletePersistenceThreshold(java.time.Duration v) {
            long micros = v.toNanos() / 1000;
            if (micros != 0) {
                checkLong(micros, 1000, Long.MAX_VALUE / 2, "deletePersistenceThreshold (µs)");
            }
            this.deletePersistenceThresholdMicros = micros;
            return this;
        }

        public Builder fadeFilePick(FadeFilePick v) {
            this.fadeFilePick = java.util.Objects.requireNonNull(v, "fadeFilePick");
            return this;
        }

        /** Compression of data pages; {@link Compression#LZ4} by default. */
        public Builder compression(Compression v) {
            this.compression = java.util.Objects.requireNonNull(v, "compression");
            return this;
        }

        /**
         * Compression of files written to the last non-empty level, where most data lives; null (the
         * default) means the same as {@link #compression(Compression)}.
         */
        public Builder bottommostCompression(Compression v) {
            this.bottommostCompression = v;
            return this;
        }

        /**
         * Compression of the level-0 files flushes write, which compaction soon rewrites; null (the
         * default) means the same as {@link #compression(Compression)}. A time-ordered family's flushes
         * write files that stay and take {@link #bottommostCompression(Compression)}.
         */
        public Builder flushCompression(Compression v) {
            this.flushCompression = v;
            return this;
        }

        /** How files are compacted; kept by a column family from its creation on. */
        public Builder compactionStyle(CompactionStyle v) {
            this.compactionStyle = java.util.Objects.requireNonNull(v, "compactionStyle");
            return this;
        }

        public Builder timeOrderedMaxFiles(int v) {
            this.timeOrderedMaxFiles = check(v, 2, 1 << 20, "timeOrderedMaxFiles");
            return this;
        }

        public ColumnFamilyOptions build() {
            return new ColumnFamilyOptions(this);
        }
    }

    static int check(int v, int min, int max, String name) {
        if (v < min || v > max) {
            throw new IllegalArgumentException(name + " must be in [" + min + ", " + max + "], got " + v);
        }
        return v;
    }

    static long checkLong(long v, long min, long max, String name) {
        if (v < min || v > max) {
            throw new IllegalArgumentException(name + " must be in [" + min + ", " + max + "], got " + v);
        }
        return v;
    }
}
