package io.lethe.engine;

/**
 * Options of one read or iterator: the snapshot to read at, iterator bounds (lower inclusive, upper
 * exclusive, compared as unsigned bytes) and whether pages read enter the page cache. Immutable.
 */
public final class ReadOptions {
    public static final ReadOptions DEFAULT = new ReadOptions(null, null, null, true);

    private final Snapshot snapshot;
    private final byte[] lowerBound;
    private final byte[] upperBound;
    private final boolean fillCache;

    public ReadOptions(Snapshot snapshot, byte[] lowerBound, byte[] upperBound, boolean fillCache) {
        this.snapshot = snapshot;
        this.lowerBound = lowerBound == null ? null : lowerBound.clone();
        this.upperBound = upperBound == null ? null : upperBound.clone();
        this.fillCache = fillCache;
    }

    public static ReadOptions atSnapshot(Snapshot snapshot) {
        return new ReadOptions(snapshot, null, null, true);
    }

    public static ReadOptions bounded(byte[] lowerBound, byte[] upperBound) {
        return new ReadOptions(null, lowerBound, upperBound, true);
    }

    public ReadOptions withSnapshot(Snapshot s) {
        return new ReadOptions(s, lowerBound, upperBound, fillCache);
    }

    public Snapshot snapshot() {
        return snapshot;
    }

    byte[] lowerBoundUnsafe() {
        return lowerBound;
    }

    byte[] upperBoundUnsafe() {
        return upperBound;
    }

    public boolean fillCache() {
        return fillCache;
    }
}
