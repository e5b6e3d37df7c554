package io.lethe.engine;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.IntFunction;

/**
 * A snapshot of what the engine holds and has done, as plain Java values. Mirrors {@code
 * lethe::DbStatistics}.
 */
public record Statistics(
        long bytesWrittenWal,
        long bytesWrittenFlush,
        long bytesWrittenCompaction,
        long bytesReadCompaction,
        long bytesReadTable,
        long flushes,
        long compactionsLevel0,
        long compactionsSaturation,
        long compactionsManual,
        long trivialMoves,
        long pageCacheHits,
        long pageCacheMisses,
        long bloomUseful,
        long writeStalls,
        long userBytesWritten,
        long liveBytes,
        long compactionsDeleteDriven,
        /** Bytes written by compactions, by reason: level 0, saturation, manual, move, delete-driven. */
        List<Long> bytesWrittenCompactionByReason,
        /** Point deletes not written because no version of the key could exist. */
        long blindDeletesSkipped,
        SecondaryDeletes secondaryDeletes,
        List<ColumnFamily> columnFamilies) {

    /**
     * Secondary deletes by delete key ({@link LetheDb#deleteByDeleteKey}, {@link LetheDb#advanceHorizon}):
     * calls that added a record; full pages dropped by manifest edits and their bytes (reclaimed without
     * reading or rewriting them); files all of whose pages were dropped; local bytes released by hole
     * punching; pages only partly covered at the last check (left to compaction); key and value bytes that
     * flushes and compactions removed because a secondary delete covered them; partly covered pages
     * rewritten into patch tables (the rest of their file untouched) and the bytes those rewrites read and
     * wrote.
     */
    public record SecondaryDeletes(long deletes, long pagesDropped, long pageBytesDropped, long filesDropped,
            long bytesPunched, long partiallyCoveredPages, long bytesCompacted, long pagesRewritten,
            long rewriteBytesRead, long rewriteBytesWritten) {}

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

    /** Flink-friendly total: bytes written by flushes and compactions per byte the user wrote. */
    public double writeAmplification() {
        return userBytesWritten == 0 ? 0 : (double) (bytesWrittenFlush + bytesWrittenCompaction) / userBytesWritten;
    }

    /** Decodes the flat array filled by the native side (lethe_jni.cc, Statistics). */
    static Statistics decode(long[] r, IntFunction<String> names) {
        int i = 17;
        List<Long> byReason = new ArrayList<>();
        for (int k = 0; k < 5; k++) {
            byReason.add(r[i++]);
        }
        long blindDeletesSkipped = r[i++];
        SecondaryDeletes secondary = new SecondaryDeletes(r[i], r[i + 1], r[i + 2], r[i + 3], r[i + 4], r[i + 5],
                r[i + 6], r[i + 7], r[i + 8], r[i + 9]);
        i += 10;
        int cfs = (int) r[i++];
        List<ColumnFamily> list = new ArrayList<>(cfs);
        for (int c = 0; c < cfs; c++) {
            int id = (int) r[i++];
            long memBytes = r[i++];
            long memEntries = r[i++];
            long threshold = r[i++];
            long oldestAge = r[i++];
            double spaceAmp = Double.longBitsToDouble(r[i++]);
            long horizon = r[i++];
            long records = r[i++];
            long pagesPerTile = r[i++];
            int levels = (int) r[i++];
            List<Level> ls = new ArrayList<>(levels);
            for (int l = 0; l < levels; l++) {
                List<Long> histogram = List.of(r[i + 7], r[i + 8], r[i + 9], r[i + 10], r[i + 11]);
                ls.add(new Level(l, r[i], r[i + 1], r[i + 2], r[i + 3], r[i + 4], r[i + 5], r[i + 6], histogram));
                i += 12;
            }
            list.add(new ColumnFamily(id, names.apply(id), memBytes, memEntries, threshold, oldestAge, spaceAmp,
                    horizon, records, pagesPerTile, Collections.unmodifiableList(ls)));
        }
        return new Statistics(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11], r[12], r[13],
                r[14], r[15], r[16], Collections.unmodifiableList(byReason), blindDeletesSkipped,
                secondary, Collections.unmodifiableList(list));
    }
}
