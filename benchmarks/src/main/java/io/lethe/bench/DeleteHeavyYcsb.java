package io.lethe.bench;

import io.lethe.engine.ColumnFamilyHandle;
import io.lethe.engine.ColumnFamilyOptions;
import io.lethe.engine.DbOptions;
import io.lethe.engine.LetheDb;
import io.lethe.engine.Statistics;
import io.lethe.engine.WriteOptions;

import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.BloomFilter;
import org.rocksdb.CompressionType;
import org.rocksdb.LRUCache;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.TableProperties;
import org.rocksdb.TablePropertiesCollectorFactory;
import org.rocksdb.TickerType;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.stream.Stream;

/**
 * The delete-heavy YCSB-A variant of issue 5, Lethe with FADE against rocksdbjni (plain; with
 * {@code ttl} = D_th; with the deletion-triggered compaction collector), same memory budgets, in
 * one process: 50 % lookups, 50 % writes of which a share are point deletes, uniform keys.
 *
 * <p>Per run: load N keys, run M operations (wall clock; D_th is a wall-clock duration too, since
 * RocksDB's ttl is one, in whole seconds), count tombstones, flush, measure sizes, stay idle for
 * 1.2 D_th, count tombstones again. Space amplification = live table bytes after the flush /
 * logical bytes of the live keys; write amplification = bytes written by flushes and compactions
 * (the final flush included) / bytes the workload wrote; tombstones and the oldest tombstone's age
 * from Lethe's statistics and, for RocksDB, from its table properties (a file's oldest key time,
 * an upper bound on its tombstones' age) plus its memtable counters (age unknown).
 *
 * <p>Arguments: {@code [quick|full] [D_th seconds] [csv file]}. Quick: 200 k keys, 1 M operations,
 * D_th 1 s. Full: 1 M keys, 4 M operations, D_th 5 s. FADE has to push every tombstone through
 * the tree within D_th, so its extra write work grows as D_th shrinks towards the time the
 * workload takes to write the tree's size.
 */
public final class DeleteHeavyYcsb {
    static final int KEY_BYTES = 16;
    static final int VALUE_BYTES = 100;
    static final long WRITE_BUFFER = 8L << 20;
    static final long CACHE = 16L << 20;
    static final long LEVEL1 = 32L << 20;
    static final long TARGET_FILE = 8L << 20;

    record Measure(long liveBytes, long writtenBytes, long tombstones, double maxTombstoneAgeSeconds) {}

    interface Engine extends AutoCloseable {
        void put(byte[] k, byte[] v) throws Exception;

        byte[] get(byte[] k) throws Exception;

        void delete(byte[] k) throws Exception;

        Measure measure() throws Exception;

        /** Writes the memtables to files and waits, so file sizes cover every live key. */
        void flush() throws Exception;

        @Override
        void close();
    }

    static final class Lethe implements Engine {
        final LetheDb db;
        final ColumnFamilyHandle cf;

        Lethe(Path dir, Duration threshold) throws IOException {
            db = LetheDb.open(dir.toString(), DbOptions.builder().useWal(false).writeBufferSizeBytes(WRITE_BUFFER)
                    .pageCacheBytes(CACHE)
                    .defaultColumnFamilyOptions(ColumnFamilyOptions.builder().sizeRatio(10).level1Bytes(LEVEL1)
                            .targetFileSizeBytes(TARGET_FILE).pageSizeBytes(4096).bloomBitsPerKey(10)
                            .deletePersistenceThreshold(threshold).build())
                    .build());
            cf = db.defaultColumnFamily();
        }

        public void put(byte[] k, byte[] v) throws Exception {
            db.put(WriteOptions.NO_WAL, cf, k, v, LetheDb.MAX_DELETE_KEY);
        }

        public byte[] get(byte[] k) throws Exception {
            return db.get(cf, k);
        }

        public void delete(byte[] k) throws Exception {
            db.delete(WriteOptions.NO_WAL, cf, k);
        }

        public void flush() throws Exception {
            db.flush();
            db.waitForBackgroundWork();
        }

        public Measure measure() {
            Statistics s = db.statistics();
            Statistics.ColumnFamily c = s.columnFamilies().get(0);
            return new Measure(s.liveBytes(), s.bytesWrittenFlush() + s.bytesWrittenCompaction(), c.tombstones(),
                    c.oldestTombstoneAgeMicros() / 1e6);
        }

        public void close() {
            db.close();
        }
    }

    static final class Rocks implements Engine {
        static {
            RocksDB.loadLibrary();
        }

        final LRUCache cache = new LRUCache(CACHE);
        final BloomFilter bloom = new BloomFilter(10);
        final org.rocksdb.Statistics stats = new org.rocksdb.Statistics();
        final Options options;
        final org.rocksdb.WriteOptions writeOptions = new org.rocksdb.WriteOptions().setDisableWAL(true);
        final RocksDB db;

        Rocks(Path dir, String variant, Duration threshold) throws Exception {
            options = new Options().setCreateIfMissing(true).setWriteBufferSize(WRITE_BUFFER)
                    .setMaxWriteBufferNumber(2).setMaxBytesForLevelBase(LEVEL1).setTargetFileSizeBase(TARGET_FILE)
                    .setCompressionType(CompressionType.NO_COMPRESSION).setStatistics(stats)
                    .setTableFormatConfig(new BlockBasedTableConfig().setBlockCache(cache).setBlockSize(4096)
                            .setFilterPolicy(bloom));
            if (variant.equals("ttl")) {
                options.setTtl(Math.max(1, threshold.toSeconds()));
            } else if (variant.equals("deletion-collector")) {
                // RocksDB's CompactOnDeletionCollector: a file with 50 deletes in any window of 128
                // entries (or 10 % deletes overall) is marked for compaction.
                options.setTablePropertiesCollectorFactory(
                        List.of(TablePropertiesCollectorFactory.NewCompactOnDeletionCollectorFactory(128, 50, 0.1)));
            }
            db = RocksDB.open(options, dir.toString());
        }

        public void put(byte[] k, byte[] v) throws Exception {
            db.put(writeOptions, k, v);
        }

        public byte[] get(byte[] k) throws Exception {
            return db.get(k);
        }

        public void delete(byte[] k) throws Exception {
            db.delete(writeOptions, k);
        }

        public void flush() throws Exception {
            try (org.rocksdb.FlushOptions fo = new org.rocksdb.FlushOptions().setWaitForFlush(true)) {
                db.flush(fo);
            }
        }

        public Measure measure() throws Exception {
            long live = Long.parseLong(db.getProperty("rocksdb.live-sst-files-size"));
            long written = stats.getTickerCount(TickerType.FLUSH_WRITE_BYTES)
                    + stats.getTickerCount(TickerType.COMPACT_WRITE_BYTES);
            long tombstones = Long.parseLong(db.getProperty("rocksdb.num-deletes-active-mem-table"))
                    + Long.parseLong(db.getProperty("rocksdb.num-deletes-imm-mem-tables"));
            long now = System.currentTimeMillis() / 1000;
            double maxAge = 0;
            for (TableProperties p : db.getPropertiesOfAllTables().values()) {
                long dels = p.getNumDeletions() + p.getNumRangeDeletions();
                if (dels == 0) {
                    continue;
                }
                tombstones += dels;
                long born = p.getOldestKeyTime() > 0 ? p.getOldestKeyTime() : p.getCreationTime();
                if (born > 0) {
                    maxAge = Math.max(maxAge, now - born);
                }
            }
            return new Measure(live, written, tombstones, maxAge);
        }

        public void close() {
            db.close();
            writeOptions.close();
            options.close();
            stats.close();
            bloom.close();
            cache.close();
        }
    }

    record Row(String system, int deletePercent, double spaceAmp, double writeAmp, double lookupsPerSec,
            double opsPerSec, long tombstonesEnd, double maxAgeEnd, long tombstonesIdle, double maxAgeIdle,
            double threshold) {}

    static byte[] key(long i) {
        return String.format("user%012d", i).getBytes();
    }

    static Row run(String system, int deletePercent, int keys, long ops, Duration threshold, Path root)
            throws Exception {
        Path dir = Files.createTempDirectory(root, system + "-" + deletePercent + "-");
        SplittableRandom rnd = new SplittableRandom(42);
        byte[] value = new byte[VALUE_BYTES];
        BitSet live = new BitSet(keys);
        long userBytes = 0;
        long lookupNanos = 0;
        long lookups = 0;
        Row row;
        try (Engine e = system.equals("lethe") ? new Lethe(dir, threshold)
                : new Rocks(dir, system.replace("rocksdb-", "").replace("rocksdb", "plain"), threshold)) {
            for (int i = 0; i < keys; i++) {
                rnd.nextBytes(value);
                e.put(key(i), value);
                live.set(i);
                userBytes += KEY_BYTES + VALUE_BYTES;
            }
            long start = System.nanoTime();
            long progressAt = ops / 10;
            for (long op = 0; op < ops; op++) {
                int k = rnd.nextInt(keys);
                int r = rnd.nextInt(100);
                if (r < 50) {
                    long t = System.nanoTime();
                    e.get(key(k));
                    lookupNanos += System.nanoTime() - t;
                    lookups++;
                } else if (r < 50 + deletePercent) {
                    e.delete(key(k));
                    live.clear(k);
                    userBytes += KEY_BYTES;
                } else {
                    rnd.nextBytes(value);
                    e.put(key(k), value);
                    live.set(k);
                    userBytes += KEY_BYTES + VALUE_BYTES;
                }
                if (op + 1 == progressAt) {
                    System.err.printf(Locale.ROOT, "\r  %-26s %2d%% deletes: %3d%%", system, deletePercent,
                            (op + 1) * 100 / ops);
                    progressAt += ops / 10;
                }
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            Measure end = e.measure();
            // Sizes with every live key in files (the memtables would hide up to 16 MB).
            e.flush();
            Measure flushed = e.measure();
            long logical = (long) live.cardinality() * (KEY_BYTES + VALUE_BYTES);
            System.err.printf(Locale.ROOT, "\r  %-26s %2d%% deletes: idle for %.1f s%n", system, deletePercent,
                    threshold.toMillis() * 1.2 / 1000);
            Thread.sleep(threshold.toMillis() * 12 / 10);
            Measure idle = e.measure();
            row = new Row(system, deletePercent, (double) flushed.liveBytes() / logical,
                    (double) flushed.writtenBytes() / userBytes, lookups / (lookupNanos / 1e9), ops / seconds,
                    end.tombstones(), end.maxTombstoneAgeSeconds(), idle.tombstones(), idle.maxTombstoneAgeSeconds(),
                    threshold.toMillis() / 1000.0);
        } finally {
            try (Stream<Path> files = Files.walk(dir)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
        return row;
    }

    public static void main(String[] args) throws Exception {
        boolean full = args.length > 0 && args[0].equals("full");
        int keys = full ? 1_000_000 : 200_000;
        long ops = full ? 4_000_000 : 1_000_000;
        Duration threshold = Duration.ofSeconds(args.length > 1 ? Long.parseLong(args[1]) : full ? 5 : 1);
        Path root = Files.createTempDirectory("lethe-delete-heavy");
        List<Row> rows = new ArrayList<>();
        System.err.printf(Locale.ROOT, "delete-heavy YCSB-A: %d keys, %d operations, D_th %d s%n", keys, ops,
                threshold.toSeconds());
        for (int deletes : new int[] {2, 5, 10}) {
            for (String system : new String[] {"lethe", "rocksdb", "rocksdb-ttl", "rocksdb-deletion-collector"}) {
                rows.add(run(system, deletes, keys, ops, threshold, root));
            }
        }
        Files.deleteIfExists(root);
        String header = String.format(Locale.ROOT, "%-27s %4s %9s %9s %11s %11s %11s %9s %11s %9s", "system",
                "del%", "space-amp", "write-amp", "lookups/s", "ops/s", "tomb(end)", "age(end)", "tomb(idle)",
                "age(idle)");
        System.out.println(header);
        for (Row r : rows) {
            System.out.println(String.format(Locale.ROOT, "%-27s %4d %9.2f %9.2f %11.0f %11.0f %11d %8.1fs %11d %8.1fs",
                    r.system(), r.deletePercent(), r.spaceAmp(), r.writeAmp(), r.lookupsPerSec(), r.opsPerSec(),
                    r.tombstonesEnd(), r.maxAgeEnd(), r.tombstonesIdle(), r.maxAgeIdle()));
        }
        System.out.println("Lethe / plain RocksDB:");
        for (int deletes : new int[] {2, 5, 10}) {
            Row l = find(rows, "lethe", deletes);
            Row p = find(rows, "rocksdb", deletes);
            System.out.println(String.format(Locale.ROOT,
                    "  %2d%% deletes: space-amp %.2fx lower, write-amp %.2fx of RocksDB's, lookups %.2fx", deletes,
                    p.spaceAmp() / l.spaceAmp(), l.writeAmp() / p.writeAmp(), l.lookupsPerSec() / p.lookupsPerSec()));
        }
        if (args.length > 2) {
            try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(Path.of(args[2])))) {
                w.println("system,delete_percent,space_amp,write_amp,lookups_per_s,ops_per_s,tombstones_end,"
                        + "max_tombstone_age_end_s,tombstones_idle,max_tombstone_age_idle_s,threshold_s");
                for (Row r : rows) {
                    w.println(String.format(Locale.ROOT, "%s,%d,%.4f,%.4f,%.0f,%.0f,%d,%.1f,%d,%.1f,%.1f", r.system(),
                            r.deletePercent(), r.spaceAmp(), r.writeAmp(), r.lookupsPerSec(), r.opsPerSec(),
                            r.tombstonesEnd(), r.maxAgeEnd(), r.tombstonesIdle(), r.maxAgeIdle(), r.threshold()));
                }
            }
        }
    }

    static Row find(List<Row> rows, String system, int deletes) {
        return rows.stream().filter(r -> r.system().equals(system) && r.deletePercent() == deletes).findFirst()
                .orElseThrow();
    }
}
