package io.lethe.bench;

import static io.lethe.bench.DeleteHeavyYcsb.CACHE;
import static io.lethe.bench.DeleteHeavyYcsb.LEVEL1;
import static io.lethe.bench.DeleteHeavyYcsb.TARGET_FILE;
import static io.lethe.bench.DeleteHeavyYcsb.WRITE_BUFFER;

import io.lethe.engine.ColumnFamilyHandle;
import io.lethe.engine.ColumnFamilyOptions;
import io.lethe.engine.Compression;
import io.lethe.engine.DbOptions;
import io.lethe.engine.LetheDb;
import io.lethe.engine.Statistics;
import io.lethe.engine.Ticker;
import io.lethe.engine.WriteOptions;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** Lethe with FADE under the delete-heavy YCSB workload; tombstone ages are its own write times. */
final class YcsbLethe implements YcsbEngine {
    private final LetheDb db;
    private final ColumnFamilyHandle cf;

    YcsbLethe(Path dir, Duration threshold) throws IOException {
        db = LetheDb.open(dir.toString(), DbOptions.builder().useWal(false).writeBufferSizeBytes(WRITE_BUFFER)
                .pageCacheBytes(CACHE)
                .defaultColumnFamilyOptions(ColumnFamilyOptions.builder().sizeRatio(10).level1Bytes(LEVEL1)
                        .dynamicLevelBytes(true)
                        .targetFileSizeBytes(TARGET_FILE).pageSizeBytes(4096).bloomBitsPerKey(10).compression(Compression.NONE)
                        .deletePersistenceThreshold(threshold).build())
                .build());
        cf = db.defaultColumnFamily();
    }

    @Override
    public void put(byte[] k, byte[] v) throws Exception {
        db.put(WriteOptions.NO_WAL, cf, k, v, LetheDb.MAX_DELETE_KEY);
    }

    @Override
    public byte[] get(byte[] k) throws Exception {
        return db.get(cf, k);
    }

    @Override
    public void delete(byte[] k) throws Exception {
        db.delete(WriteOptions.NO_WAL, cf, k);
    }

    @Override
    public void flush() throws Exception {
        db.flush();
        db.waitForBackgroundWork();
    }

    @Override
    public Measure measure(WriteClock clock) throws Exception {
        Statistics s = db.statistics();
        Statistics.ColumnFamily c = s.columnFamilies().get(0);
        return new Measure(s.get(Ticker.LIVE_BYTES),
                s.get(Ticker.BYTES_WRITTEN_FLUSH) + s.get(Ticker.BYTES_WRITTEN_COMPACTION),
                s.get(Ticker.COMPACTIONS_LEVEL0) + s.get(Ticker.COMPACTIONS_SATURATION)
                        + s.get(Ticker.COMPACTIONS_MANUAL) + s.get(Ticker.COMPACTIONS_DELETE_DRIVEN),
                s.get(Ticker.BYTES_WRITTEN_COMPACTION), c.tombstones(), c.oldestTombstoneAgeMicros() / 1e6,
                files());
    }

    /** Per table file with tombstones (property lethe.files: "... tombstones=N tombstone-age-us=A ..."). */
    private List<FileTombstones> files() throws Exception {
        List<FileTombstones> files = new ArrayList<>();
        for (String line : db.property(cf, "lethe.files").split("\n")) {
            int at = line.indexOf(" tombstones=");
            int ageAt = line.indexOf(" tombstone-age-us=");
            if (at < 0 || ageAt < 0) {
                continue;
            }
            long n = Long.parseLong(line.substring(at + 12, line.indexOf(' ', at + 1)));
            long age = Long.parseLong(line.substring(ageAt + 18, line.indexOf(' ', ageAt + 1)));
            if (n > 0) {
                files.add(new FileTombstones(age, age, n));
            }
        }
        return files;
    }

    @Override
    public void close() {
        db.close();
    }
}
