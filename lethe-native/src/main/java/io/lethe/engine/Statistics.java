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
        List<ColumnFamily> columnFamilies) {

    /** Files and entries of one level. */
    public record Level(int level, long files, long bytes, long entries, long pointTombstones, long rangeTombstones) {}

    /** One column family's memtable and levels (level 0 first, up to the deepest used). */
    public record ColumnFamily(int id, String name, long memtableBytes, long memtableEntries, List<Level> levels) {
        public long totalBytes() {
            return levels.stream().mapToLong(Level::bytes).sum();
        }
    }

    /** Flink-friendly total: bytes written by flushes and compactions per byte the user wrote. */
    public double writeAmplification() {
        return userBytesWritten == 0 ? 0 : (double) (bytesWrittenFlush + bytesWrittenCompaction) / userBytesWritten;
    }

    /** Decodes the flat array filled by the native side (lethe_jni.cc, Statistics). */
    static Statistics decode(long[] r, IntFunction<String> names) {
        int i = 16;
        int cfs = (int) r[i++];
        List<ColumnFamily> list = new ArrayList<>(cfs);
        for (int c = 0; c < cfs; c++) {
            int id = (int) r[i++];
            long memBytes = r[i++];
            long memEntries = r[i++];
            int levels = (int) r[i++];
            List<Level> ls = new ArrayList<>(levels);
            for (int l = 0; l < levels; l++) {
                ls.add(new Level(l, r[i], r[i + 1], r[i + 2], r[i + 3], r[i + 4]));
                i += 5;
            }
            list.add(new ColumnFamily(id, names.apply(id), memBytes, memEntries, Collections.unmodifiableList(ls)));
        }
        return new Statistics(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11], r[12], r[13],
                r[14], r[15], Collections.unmodifiableList(list));
    }
}
