package io.lethe.engine;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.function.IntFunction;

/**
 * A snapshot of what the engine holds and has done: its counters ({@link Ticker}, one list shared with the
 * native engine) and, per column family and level, what its files hold. Immutable.
 */
public final class Statistics {
    /** The layout version of the native transfer (jni/statistics_transfer.h). */
    static final long TRANSFER_VERSION = 2;
    static final int COLUMN_FAMILY_FIELDS = 9;
    static final int TOMBSTONE_AGE_BUCKETS = 5;
    static final int LEVEL_FIELDS = 7 + TOMBSTONE_AGE_BUCKETS;

    /**
     * Files and entries of one level. {@code tombstoneAgeHistogram}: tombstones by age as shares of
     * D_th, buckets [0, 25 %), [25 %, 50 %), [50 %, 75 %), [75 %, 100 %), 100 % and older (all zero
     * while FADE is off); a file's tombstones count at its oldest one's age.
     */
    public record Level(int level, long files, long bytes, long entries, long pointTombstones, long rangeTombstones,
            long oldestTombstoneAgeMicros, long estimatedInvalidated, List<Long> tombstoneAgeHistogram) {}

    /**
     * One column family's memtable and levels (level 0 first, up to the deepest used), with FADE's
     * threshold (0: off) and the oldest tombstone's age (memtables included) to compare with it, the
     * expiry horizon (0: none), the number of secondary-delete records kept, and the pages per delete tile
     * of the family's next file (chosen from the workload when configured as auto).
     */
    public record ColumnFamily(int id, String name, long memtableBytes, long memtableEntries,
            long deletePersistenceThresholdMicros, long oldestTombstoneAgeMicros, double spaceAmplificationEstimate,
            long horizon, long secondaryDeleteRecords, long pagesPerTile, List<Level> levels) {
        public long totalBytes() {
            return levels.stream().mapToLong(Level::bytes).sum();
        }

        public long tombstones() {
            return levels.stream().mapToLong(l -> l.pointTombstones() + l.rangeTombstones()).sum();
        }
    }

    private final long[] tickers;
    private final List<ColumnFamily> columnFamilies;

    private Statistics(long[] tickers, List<ColumnFamily> columnFamilies) {
        this.tickers = tickers;
        this.columnFamilies = columnFamilies;
    }

    /** The counter's value. */
    public long get(Ticker ticker) {
        return tickers[ticker.ordinal()];
    }

    public List<ColumnFamily> columnFamilies() {
        return columnFamilies;
    }

    /** Bytes written by flushes and compactions per byte the user wrote (0 before any write). */
    public double writeAmplification() {
        long user = get(Ticker.USER_BYTES_WRITTEN);
        return user == 0 ? 0
                : (double) (get(Ticker.BYTES_WRITTEN_FLUSH) + get(Ticker.BYTES_WRITTEN_COMPACTION)) / user;
    }

    @Override
    public String toString() {
        StringBuilder s = new StringBuilder("Statistics{");
        for (Ticker t : Ticker.values()) {
            s.append(t.metricName()).append('=').append(get(t)).append(", ");
        }
        return s.append("columnFamilies=").append(columnFamilies).append('}').toString();
    }

    /**
     * Decodes the native transfer (layout in jni/statistics_transfer.h). Every version, count and the
     * total length are checked: a native library of another build fails here with an
     * {@link IllegalStateException} naming what differs.
     */
    static Statistics decode(long[] r, IntFunction<String> names) {
        Reader in = new Reader(r);
        in.expect("transfer version", TRANSFER_VERSION);
        in.expect("ticker count", Ticker.values().length);
        long[] tickers = in.next(Ticker.values().length);
        int families = in.count("column family count");
        List<ColumnFamily> list = new ArrayList<>(families);
        for (int c = 0; c < families; c++) {
            list.add(decodeColumnFamily(in, names));
        }
        in.expectEnd();
        return new Statistics(tickers, Collections.unmodifiableList(list));
    }

    private static ColumnFamily decodeColumnFamily(Reader in, IntFunction<String> names) {
        long[] f = in.next(COLUMN_FAMILY_FIELDS);
        int levels = in.count("level count");
        List<Level> ls = new ArrayList<>(levels);
        for (int l = 0; l < levels; l++) {
            long[] v = in.next(LEVEL_FIELDS);
            List<Long> histogram = Arrays.stream(v, 7, LEVEL_FIELDS).boxed().toList();
            ls.add(new Level(l, v[0], v[1], v[2], v[3], v[4], v[5], v[6], histogram));
        }
        int id = (int) f[0];
        return new ColumnFamily(id, names.apply(id), f[1], f[2], f[3], f[4], Double.longBitsToDouble(f[5]), f[6],
                f[7], f[8], Collections.unmodifiableList(ls));
    }

    /** Reads the transfer front to back, failing on any value past its end. */
    private static final class Reader {
        private final long[] r;
        private int pos;

        Reader(long[] r) {
            this.r = r;
        }

        long[] next(int n) {
            if (n < 0 || r.length - pos < n) {
                throw mismatch("the transfer ends after " + r.length + " values; " + (pos + n) + " expected");
            }
            long[] v = Arrays.copyOfRange(r, pos, pos + n);
            pos += n;
            return v;
        }

        int count(String what) {
            long n = next(1)[0];
            if (n < 0 || n > r.length) {
                throw mismatch("bad " + what + " " + n);
            }
            return (int) n;
        }

        void expect(String what, long expected) {
            long actual = next(1)[0];
            if (actual != expected) {
                throw mismatch(what + " " + actual + ", expected " + expected);
            }
        }

        void expectEnd() {
            if (pos != r.length) {
                throw mismatch((r.length - pos) + " values left over");
            }
        }

        private static IllegalStateException mismatch(String what) {
            return new IllegalStateException(
                    "statistics from the native library do not match this Java API (another build?): " + what);
        }
    }
}
