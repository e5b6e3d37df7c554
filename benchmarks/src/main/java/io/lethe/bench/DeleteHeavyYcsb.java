package io.lethe.bench;

import io.lethe.engine.ColumnFamilyHandle;
import io.lethe.engine.ColumnFamilyOptions;
import io.lethe.engine.DbOptions;
import io.lethe.engine.LetheDb;
import io.lethe.engine.Statistics;
import io.lethe.engine.Ticker;
import io.lethe.engine.WriteOptions;

import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.BloomFilter;
import org.rocksdb.CompressionType;
import org.rocksdb.HistogramType;
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
 * The delete-heavy YCSB-A variant (the Lethe paper's), Lethe with FADE against rocksdbjni (plain; with
 * {@code ttl} = D_th; with the deletion-triggered compaction collector), same memory budgets, in
 * one process: 50 % lookups, 50 % writes of which a share are point deletes, uniform keys.
 *
 * <p>Per run: load N keys, run M operations (wall clock; D_th is a wall-clock duration too, since
 * RocksDB's ttl is one, in whole seconds), count tombstones, flush and wait until neither engine has
 * background work running or pending, measure sizes, stay idle for
 * 1.2 D_th, count tombstones again. Space amplification = live table bytes after the flush /
 * logical bytes of the live keys; write amplification = bytes written by flushes and compactions
 * (the final flush included) / bytes the workload wrote; tombstones and the oldest tombstone's age
 * from Lethe's statistics and, for RocksDB, from its table properties (a file's oldest key time,
 * an upper bound on its tombstones' age) plus its memtable counters (age unknown).
 *
 * <p>Arguments: {@code [quick|full] [output directory]}; {@code -Dlethe.bench.ycsb.dth-seconds} sets D_th.
 * Quick: 150 k keys, 600 k operations, 5 % deletes, D_th 1 s. Full: 500 k keys, 2 M operations, 2, 5 and
 * 10 % deletes, D_th 6 s. Two rounds, systems interleaved. FADE has to push every tombstone through
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

    /**
     * One look at an engine: live table bytes, bytes written by flushes and compactions, compactions that
     * rewrote data (trivial moves not counted), tombstones (files and memtables), the oldest one's age,
     * and per table file holding tombstones its tombstone count and age ({@code {age_us, count}}).
     */
    record Measure(long liveBytes, long writtenBytes, long compactions, long compactionBytes, long tombstones,
            double maxTombstoneAgeSeconds, List<long[]> fileTombstones) {}

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
            List<long[]> files = new ArrayList<>();
            // One line per table file: "... tombstones=N tombstone-age-us=A ...".
            for (String line : db.property(cf, "lethe.files").split("\n")) {
                int at = line.indexOf(" tombstones=");
                int ageAt = line.indexOf(" tombstone-age-us=");
                if (at < 0 || ageAt < 0) {
                    continue;
                }
                long n = Long.parseLong(line.substring(at + 12, line.indexOf(' ', at + 1)));
                long age = Long.parseLong(line.substring(ageAt + 18, line.indexOf(' ', ageAt + 1)));
                if (n > 0) {
                    files.add(new long[] {age, n});
                }
            }
            return new Measure(s.get(Ticker.LIVE_BYTES),
                    s.get(Ticker.BYTES_WRITTEN_FLUSH) + s.get(Ticker.BYTES_WRITTEN_COMPACTION),
                    s.get(Ticker.COMPACTIONS_LEVEL0) + s.get(Ticker.COMPACTIONS_SATURATION)
                            + s.get(Ticker.COMPACTIONS_MANUAL) + s.get(Ticker.COMPACTIONS_DELETE_DRIVEN),
                    s.get(Ticker.BYTES_WRITTEN_COMPACTION), c.tombstones(), c.oldestTombstoneAgeMicros() / 1e6, files);
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

        /** Flushes and waits for the compactions it starts, as Lethe's flush does here. */
        public void flush() throws Exception {
            try (org.rocksdb.FlushOptions fo = new org.rocksdb.FlushOptions().setWaitForFlush(true)) {
                db.flush(fo);
            }
            RocksIdle.await(db);
        }

        public Measure measure() throws Exception {
            long live = Long.parseLong(db.getProperty("rocksdb.live-sst-files-size"));
            long written = stats.getTickerCount(TickerType.FLUSH_WRITE_BYTES)
                    + stats.getTickerCount(TickerType.COMPACT_WRITE_BYTES);
            long tombstones = Long.parseLong(db.getProperty("rocksdb.num-deletes-active-mem-table"))
                    + Long.parseLong(db.getProperty("rocksdb.num-deletes-imm-mem-tables"));
            long now = System.currentTimeMillis() / 1000;
            double maxAge = 0;
            List<long[]> files = new ArrayList<>();
            for (TableProperties p : db.getPropertiesOfAllTables().values()) {
                long dels = p.getNumDeletions() + p.getNumRangeDeletions();
                if (dels == 0) {
                    continue;
                }
                tombstones += dels;
                long born = p.getOldestKeyTime() > 0 ? p.getOldestKeyTime() : p.getCreationTime();
                long age = born > 0 ? Math.max(0, now - born) : 0;
                maxAge = Math.max(maxAge, age);
                files.add(new long[] {age * 1_000_000, dels});
            }
            // A compaction job per compaction that rewrote data (trivial moves run none).
            long compactions = stats.getHistogramData(HistogramType.COMPACTION_TIME).getCount();
            return new Measure(live, written, compactions, stats.getTickerCount(TickerType.COMPACT_WRITE_BYTES),
                    tombstones, maxAge, files);
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

    record Row(int round, String system, int deletePercent, double spaceAmp, double writeAmp,
            double lookupsPerSec, double opsPerSec, long compactions, long compactionBytes, long tombstonesEnd,
            double maxAgeEnd, long tombstonesIdle, double maxAgeIdle, double threshold, List<long[]> fileTombstones) {}

    static byte[] key(long i) {
        return String.format("user%012d", i).getBytes();
    }

    static Row run(int round, String system, int deletePercent, int keys, long ops, Duration threshold, Path root)
            throws Exception {
        Path dir = Files.createTempDirectory(root, system + "-" + deletePercent + "-");
        SplittableRandom rnd = new SplittableRandom(42 + round);
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
            long progressAt = ops / 4;
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
                if (op + 1 == progressAt && op + 1 < ops) {
                    System.out.printf(Locale.ROOT, "  round %d %-26s %2d%% deletes: %3d%% of the operations%n", round,
                            system, deletePercent, (op + 1) * 100 / ops);
                    progressAt += ops / 4;
                }
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            Measure end = e.measure();
            // Sizes with every live key in files (the memtables would hide up to 16 MB).
            e.flush();
            Measure flushed = e.measure();
            long logical = (long) live.cardinality() * (KEY_BYTES + VALUE_BYTES);
            Thread.sleep(threshold.toMillis() * 12 / 10);
            Measure idle = e.measure();
            row = new Row(round, system, deletePercent, (double) flushed.liveBytes() / logical,
                    (double) flushed.writtenBytes() / userBytes, lookups / (lookupNanos / 1e9), ops / seconds,
                    flushed.compactions(), flushed.compactionBytes(), end.tombstones(), end.maxTombstoneAgeSeconds(),
                    idle.tombstones(), idle.maxTombstoneAgeSeconds(), threshold.toMillis() / 1000.0,
                    end.fileTombstones());
            System.out.println("  " + format(row));
        } finally {
            try (Stream<Path> files = Files.walk(dir)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
        return row;
    }

    static final String HEADER = String.format(Locale.ROOT, "round %-26s %4s %9s %9s %11s %11s %5s %10s %9s %10s %9s",
            "system", "del%", "space-amp", "write-amp", "lookups/s", "ops/s", "comp", "tomb(end)", "age(end)",
            "tomb(idle)", "age(idle)");

    static String format(Row r) {
        return String.format(Locale.ROOT, "%5d %-26s %4d %9.2f %9.2f %11.0f %11.0f %5d %10d %8.1fs %10d %8.1fs",
                r.round(), r.system(), r.deletePercent(), r.spaceAmp(), r.writeAmp(), r.lookupsPerSec(),
                r.opsPerSec(), r.compactions(), r.tombstonesEnd(), r.maxAgeEnd(), r.tombstonesIdle(), r.maxAgeIdle());
    }

    /**
     * Arguments: {@code [quick|full] [output directory]}. Writes {@code ycsb.csv}, {@code
     * ycsb-tombstone-ages.csv} (per round, system and delete share: each table file that held tombstones
     * at the end of the run, with its tombstones' age and count) and {@code ycsb.settings.csv}.
     */
    public static void main(String[] args) throws Exception {
        boolean full = args.length > 0 && args[0].equals("full");
        Path out = Path.of(args.length > 1 ? args[1] : "target/ycsb");
        Files.createDirectories(out);
        int keys = full ? 500_000 : 150_000;
        long ops = full ? 2_000_000 : 600_000;
        Duration threshold = Duration.ofSeconds(Long.getLong("lethe.bench.ycsb.dth-seconds", full ? 6 : 1));
        int rounds = 2;
        int[] deletes = full ? new int[] {2, 5, 10} : new int[] {5};
        String[] systems = {"lethe", "rocksdb", "rocksdb-ttl", "rocksdb-deletion-collector"};
        Path root = Files.createTempDirectory("lethe-delete-heavy");
        List<Row> rows = new ArrayList<>();
        System.out.printf(Locale.ROOT, "delete-heavy YCSB-A: %,d keys, %,d operations, D_th %d s, %d rounds%n", keys,
                ops, threshold.toSeconds(), rounds);
        System.out.println("  " + HEADER);
        for (int deletePercent : deletes) {
            for (int round = 1; round <= rounds; round++) {
                // Interleaved: every system once per round, the order turned each round.
                for (int i = 0; i < systems.length; i++) {
                    String system = systems[(i + round - 1) % systems.length];
                    rows.add(run(round, system, deletePercent, keys, ops, threshold, root));
                }
            }
        }
        Files.deleteIfExists(root);
        try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(out.resolve("ycsb.csv")))) {
            w.println("round,system,delete_percent,threshold_s,space_amp,write_amp,lookups_per_s,ops_per_s,"
                    + "compactions,compaction_bytes_written,tombstones_end,max_tombstone_age_end_s,tombstones_idle,"
                    + "max_tombstone_age_idle_s");
            for (Row r : rows) {
                w.println(String.format(Locale.ROOT, "%d,%s,%d,%.1f,%.4f,%.4f,%.0f,%.0f,%d,%d,%d,%.1f,%d,%.1f",
                        r.round(), r.system(), r.deletePercent(), r.threshold(), r.spaceAmp(), r.writeAmp(),
                        r.lookupsPerSec(), r.opsPerSec(), r.compactions(), r.compactionBytes(), r.tombstonesEnd(),
                        r.maxAgeEnd(), r.tombstonesIdle(), r.maxAgeIdle()));
            }
        }
        try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(out.resolve("ycsb-tombstone-ages.csv")))) {
            w.println("round,system,delete_percent,file_age_s,tombstones");
            for (Row r : rows) {
                for (long[] f : r.fileTombstones()) {
                    w.println(String.format(Locale.ROOT, "%d,%s,%d,%.3f,%d", r.round(), r.system(),
                            r.deletePercent(), f[0] / 1e6, f[1]));
                }
            }
        }
        EngineBenchmarkRunner.writeSettings(out.resolve("ycsb.settings.csv"), new String[][] {
            {"what", "the paper's delete-heavy YCSB-A variant: load, then 50 % lookups and 50 % writes, a share of"
                    + " all operations being point deletes; uniform keys; wall-clock time"},
            {"data", String.format(Locale.ROOT, "%,d keys of 16 B with 100 B values loaded, then %,d operations",
                    keys, ops)},
            {"delete persistence threshold", threshold.toSeconds() + " s (Lethe's D_th; RocksDB-ttl's ttl)"},
            {"systems", "lethe (FADE); rocksdb (defaults); rocksdb-ttl (ttl = D_th, whole seconds);"
                    + " rocksdb-deletion-collector (CompactOnDeletionCollector: 50 deletes in 128 entries or 10 %)"},
            {"budgets", "8 MiB write buffers (two), 16 MiB cache, level 1 of 32 MiB, size ratio 10, 8 MiB files,"
                    + " 4 KiB pages/blocks, Bloom 10 bits/key, no compression, no WAL"},
            {"space amplification", "live table bytes after a final flush, once neither engine runs or has pending"
                    + " background work (both wait the same way) / bytes of the live keys and values"},
            {"write amplification", "bytes written by flushes and compactions / bytes the workload wrote"},
            {"tombstones", "at the end of the run (before the flush) and after idling 1.2 D_th; a file's"
                    + " tombstones count at the file's tombstone age (Lethe: its oldest tombstone's write time;"
                    + " RocksDB: its oldest key time, whole seconds); the age distribution covers tombstones in files,"
                    + " the counts include memtables"},
            {"rounds", rounds + " per delete share, systems interleaved (order rotated each round)"},
        });
    }
}
