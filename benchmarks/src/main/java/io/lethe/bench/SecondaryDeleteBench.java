package io.lethe.bench;

import io.lethe.engine.ColumnFamilyHandle;
import io.lethe.engine.ColumnFamilyOptions;
import io.lethe.engine.Compression;
import io.lethe.engine.DbOptions;
import io.lethe.engine.LetheDb;
import io.lethe.engine.Statistics;
import io.lethe.engine.Ticker;
import io.lethe.engine.WriteBatch;
import io.lethe.engine.WriteOptions;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.stream.Stream;

/**
 * Secondary range deletes: delete every entry whose delete key is below a cut, chosen so that a
 * given share of the database goes, and measure the work until the data is physically gone from every
 * file. Lethe (a horizon: whole pages dropped by a manifest edit, the partly covered page of each delete
 * tile rewritten into the file's patch table, whatever is left rewritten by FADE within D_th) against
 * RocksDB's best alternatives, in one run:
 *
 * <ul>
 *   <li>rocksdbjni, scan + point deletes + forced full compaction;
 *   <li>Flink's TTL compaction filter on frocksdbjni (Flink's RocksDB fork) + forced full compaction, in
 *       a child JVM (both libraries define {@code org.rocksdb}); skipped with a note when the jar is
 *       missing;
 *   <li>with correlated delete keys also rocksdbjni's DeleteFilesInRange + DeleteRange on the sort-key range
 *       + a compaction of that range.
 * </ul>
 *
 * <p>Data: N entries, 16-byte keys, 100-byte values whose first 8 bytes are the delete key (Flink's TTL
 * layout), inserted in random order and compacted into a settled tree. Delete keys are uniform in
 * [0, 10^6) and either uncorrelated with the sort key or equal to its rank scaled (correlated). Each
 * (delete tile size h, correlation) loads once; each selectivity then works on a fresh copy.
 * Bytes read and written come from each engine's counters (RocksDB's scan read is counted as its live
 * table bytes: a full scan reads every data block). "Gone" means: Lethe's files hold exactly the live
 * entries and no tombstone; RocksDB after its compaction likewise (checked). Each selectivity works on a
 * copy whose files have one link each (not a checkpoint's hard links), and the blocks the copy's table files
 * allocate before and after show what left the disk. Lookup cost: mean time of point lookups of live keys
 * afterwards, and Lethe's page bytes read per lookup.
 *
 * <p>Arguments: {@code [quick|full] [output directory]}. Quick: 200 k entries, h in {1, 8},
 * two selectivities. Full: 1 M entries, h in {1, 4, 8, 16, 64}, selectivities 0.01 %, 0.1 %, 1 %, 10 %,
 * 1/7. Two rounds of every system (see {@link #ROUNDS}).
 */
public final class SecondaryDeleteBench {
    static final long WRITE_BUFFER = 8L << 20;
    static final long CACHE = 16L << 20;
    static final long LEVEL1 = 32L << 20;
    static final long TARGET_FILE = 8L << 20;
    static final long DELETE_KEYS = 1_000_000;
    static final int LOOKUPS = 50_000;
    /** Rounds per correlation: times are single measurements of 2-1000 ms, so each ratio needs a second one. */
    static final int ROUNDS = 2;
    static final String FROCKSDB = "com/ververica/frocksdbjni/8.10.0-ververica-1.0/frocksdbjni-8.10.0-ververica-1.0.jar";

    private SecondaryDeleteBench() {}

    /** The generated data: key i has delete key dk(i); insertion order is a seeded permutation. */
    static final class DataSet {
        final int n;
        final boolean correlated;
        final long seed;
        final int[] order;

        DataSet(int n, boolean correlated, long seed) {
            this.n = n;
            this.correlated = correlated;
            this.seed = seed;
            order = new int[n];
            for (int i = 0; i < n; i++) {
                order[i] = i;
            }
            SplittableRandom r = new SplittableRandom(seed);
            for (int i = n - 1; i > 0; i--) {
                int j = r.nextInt(i + 1);
                int t = order[i];
                order[i] = order[j];
                order[j] = t;
            }
        }

        byte[] key(int i) {
            return String.format("k%015d", i).getBytes(StandardCharsets.US_ASCII);
        }

        long deleteKey(int i) {
            if (correlated) {
                return (long) i * DELETE_KEYS / n;
            }
            long z = (i + seed) * 0x9E3779B97F4A7C15L;
            z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
            z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
            return Long.remainderUnsigned(z ^ (z >>> 31), DELETE_KEYS);
        }

        byte[] value(int i) {
            byte[] v = new byte[100];
            long dk = deleteKey(i);
            for (int b = 0; b < 8; b++) {
                v[b] = (byte) (dk >>> (56 - 8 * b));
            }
            for (int b = 8; b < v.length; b++) {
                v[b] = (byte) ('a' + (i + b) % 26);
            }
            return v;
        }

        long cut(double selectivity) {
            return Math.round(selectivity * DELETE_KEYS);
        }

        long deleted(long cut) {
            long d = 0;
            for (int i = 0; i < n; i++) {
                d += deleteKey(i) < cut ? 1 : 0;
            }
            return d;
        }

        /** Keys that survive the cut, spread over the key space. */
        byte[][] liveKeys(long cut, int count) {
            List<byte[]> keys = new ArrayList<>(count);
            SplittableRandom r = new SplittableRandom(seed + 1);
            while (keys.size() < count) {
                int i = r.nextInt(n);
                if (deleteKey(i) >= cut) {
                    keys.add(key(i));
                }
            }
            return keys.toArray(new byte[0][]);
        }
    }

    static long deleteKeyOf(byte[] value) {
        long dk = 0;
        for (int b = 0; b < 8; b++) {
            dk = (dk << 8) | (value[b] & 0xff);
        }
        return dk;
    }

    record Row(int round, String correlation, double selectivity, String system, int h, long millis, long bytesRead,
            long bytesWritten, long pagesDropped, long pageBytesDropped, long pagesRewritten, long deleted,
            double lookupMicros, double lookupBytes, long allocatedBefore, long allocatedAfter) {
        long io() {
            return bytesRead + bytesWritten;
        }
    }

    static DbOptions letheOptions(int h, Duration threshold) {
        return DbOptions.builder().useWal(false).writeBufferSizeBytes(WRITE_BUFFER).pageCacheBytes(CACHE)
                .defaultColumnFamilyOptions(ColumnFamilyOptions.builder().sizeRatio(10).level1Bytes(LEVEL1)
                        .targetFileSizeBytes(TARGET_FILE).pageSizeBytes(4096).bloomBitsPerKey(10).pagesPerTile(h)
                        .compression(Compression.NONE)
                        .deletePersistenceThreshold(threshold).build())
                .build();
    }

    static List<Row> lethe(int round, DataSet data, int h, double[] selectivities, Duration threshold, Path work)
            throws Exception {
        List<Row> rows = new ArrayList<>();
        Path base = work.resolve("lethe-base");
        deleteTree(base);
        try (LetheDb db = LetheDb.open(base.toString(), letheOptions(h, threshold))) {
            ColumnFamilyHandle cf = db.defaultColumnFamily();
            WriteBatch batch = new WriteBatch();
            for (int n = 0; n < data.n; n++) {
                int i = data.order[n];
                batch.put(cf, data.key(i), data.value(i), data.deleteKey(i));
                if (batch.count() == 1000) {
                    db.write(WriteOptions.NO_WAL, batch);
                    batch = new WriteBatch();
                }
            }
            db.write(WriteOptions.NO_WAL, batch);
            db.compactAll();
            db.waitForBackgroundWork();
            for (double sel : selectivities) {
                long cut = data.cut(sel);
                long deleted = data.deleted(cut);
                long live = data.n - deleted;
                Path copy = work.resolve("lethe-copy");
                freshCopy(dir -> db.checkpoint(dir.toString()), work, copy);
                long allocatedBefore = OnDisk.allocatedBytes(copy);
                try (LetheDb c = LetheDb.open(copy.toString(), letheOptions(h, threshold))) {
                    ColumnFamilyHandle ccf = c.defaultColumnFamily();
                    Statistics s0 = c.statistics();
                    long t0 = System.nanoTime();
                    c.advanceHorizon(ccf, cut);
                    long deadline = t0 + Duration.ofSeconds(120).toNanos();
                    while (true) {
                        Statistics s = c.statistics();
                        Statistics.ColumnFamily f = s.columnFamilies().get(0);
                        long entries = f.levels().stream().mapToLong(Statistics.Level::entries).sum();
                        if (entries == live && f.tombstones() == 0 && f.memtableEntries() == 0) {
                            break;
                        }
                        if (System.nanoTime() > deadline) {
                            throw new IllegalStateException("Lethe h=" + h + ": data not gone after 120 s: " + entries
                                    + " entries, want " + live);
                        }
                        Thread.sleep(2);
                    }
                    long millis = (System.nanoTime() - t0) / 1_000_000;
                    long allocatedAfter = OnDisk.settledAllocatedBytes(copy);
                    Statistics s1 = c.statistics();
                    // Compactions FADE ran, plus the partial page rewrites into patch tables.
                    long read = s1.get(Ticker.BYTES_READ_COMPACTION) - s0.get(Ticker.BYTES_READ_COMPACTION)
                            + s1.get(Ticker.REWRITE_BYTES_READ) - s0.get(Ticker.REWRITE_BYTES_READ);
                    long written = s1.get(Ticker.BYTES_WRITTEN_COMPACTION) + s1.get(Ticker.BYTES_WRITTEN_FLUSH)
                            + s1.get(Ticker.REWRITE_BYTES_WRITTEN) - s0.get(Ticker.BYTES_WRITTEN_COMPACTION)
                            - s0.get(Ticker.BYTES_WRITTEN_FLUSH) - s0.get(Ticker.REWRITE_BYTES_WRITTEN);
                    byte[][] keys = data.liveKeys(cut, LOOKUPS);
                    long tableBytes = s1.get(Ticker.BYTES_READ_TABLE);
                    long l0 = System.nanoTime();
                    for (byte[] k : keys) {
                        if (c.get(ccf, k) == null) {
                            throw new IllegalStateException("live key lost: " + new String(k, StandardCharsets.US_ASCII));
                        }
                    }
                    double lookupMicros = (System.nanoTime() - l0) / 1e3 / keys.length;
                    double lookupBytes =
                            (double) (c.statistics().get(Ticker.BYTES_READ_TABLE) - tableBytes) / keys.length;
                    rows.add(new Row(round, data.correlated ? "correlated" : "uncorrelated", sel, "lethe", h, millis, read,
                            written, s1.get(Ticker.PAGES_DROPPED), s1.get(Ticker.PAGE_BYTES_DROPPED),
                            s1.get(Ticker.PAGES_REWRITTEN), deleted, lookupMicros, lookupBytes, allocatedBefore,
                            allocatedAfter));
                }
                deleteTree(copy);
                System.out.println("  " + format(rows.get(rows.size() - 1)));
            }
        }
        deleteTree(base);
        return rows;
    }

    static List<Row> rocks(int round, DataSet data, double[] selectivities, Path work) throws Exception {
        List<Row> rows = new ArrayList<>();
        Path base = work.resolve("rocks-base");
        deleteTree(base);
        String corr = data.correlated ? "correlated" : "uncorrelated";
        try (RocksSecondary db = new RocksSecondary(base, null)) {
            db.load(data);
            for (double sel : selectivities) {
                long cut = data.cut(sel);
                long deleted = data.deleted(cut);
                for (String method : data.correlated ? List.of("scan", "deleterange") : List.of("scan")) {
                    Path copy = work.resolve("rocks-copy");
                    freshCopy(db::checkpoint, work, copy);
                    long allocatedBefore = OnDisk.allocatedBytes(copy);
                    try (RocksSecondary c = new RocksSecondary(copy, null)) {
                        long t0 = System.nanoTime();
                        long scanned = 0;
                        if (method.equals("scan")) {
                            scanned = c.scanDeleteCompact(cut);
                        } else {
                            int first = (int) Math.min(data.n, (cut * data.n + DELETE_KEYS - 1) / DELETE_KEYS);
                            while (first < data.n && data.deleteKey(first) < cut) {
                                first++;
                            }
                            while (first > 0 && data.deleteKey(first - 1) >= cut) {
                                first--;
                            }
                            c.deleteRangeCompact(data.key(0), data.key(first));
                        }
                        long millis = (System.nanoTime() - t0) / 1_000_000;
                        long allocatedAfter = OnDisk.settledAllocatedBytes(copy);
                        long[] left = c.entriesAndTombstones();
                        if (left[0] != data.n - deleted || left[1] != 0) {
                            throw new IllegalStateException("RocksDB " + method + ": " + left[0] + " entries, "
                                    + left[1] + " tombstones left, want " + (data.n - deleted) + " and 0");
                        }
                        double lookup = c.lookupMicros(data.liveKeys(cut, LOOKUPS));
                        rows.add(new Row(round, corr, sel, "rocksdb-" + method, 0, millis, scanned + c.bytesRead(),
                                c.bytesWritten(), 0, 0, 0, deleted, lookup, Double.NaN, allocatedBefore,
                                allocatedAfter));
                    }
                    deleteTree(copy);
                    System.out.println("  " + format(rows.get(rows.size() - 1)));
                }
            }
        }
        deleteTree(base);
        return rows;
    }

    /** Flink's TTL compaction filter on frocksdbjni, in a child JVM; empty (with a note) without the jar. */
    static List<Row> rocksFilter(int round, DataSet data, double[] selectivities, Path work) throws Exception {
        Path jar = Path.of(System.getProperty("lethe.bench.frocksdbjni",
                Path.of(System.getProperty("user.home"), ".m2", "repository", FROCKSDB).toString()));
        if (!Files.isRegularFile(jar)) {
            System.out.println("  rocksdb-filter: skipped, " + jar + " not found (mvn dependency:get"
                    + " -Dartifact=com.ververica:frocksdbjni:8.10.0-ververica-1.0)");
            return List.of();
        }
        String self = Path.of(SecondaryDeleteBench.class.getProtectionDomain().getCodeSource().getLocation().toURI())
                .toString();
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", jar + File.pathSeparator + self, FrocksFilterRun.class.getName(), Integer.toString(data.n),
                Boolean.toString(data.correlated), Long.toString(data.seed), work.resolve("frocks").toString()));
        for (double sel : selectivities) {
            cmd.add(Double.toString(sel));
        }
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        List<Row> rows = new ArrayList<>();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line; (line = out.readLine()) != null; ) {
                if (!line.startsWith("RESULT ")) {
                    System.out.println("  [frocksdb] " + line);
                    continue;
                }
                String[] f = line.split(" ");
                double sel = Double.parseDouble(f[1]);
                long cut = data.cut(sel);
                long deleted = data.deleted(cut);
                if (Long.parseLong(f[5]) != data.n - deleted || Long.parseLong(f[6]) != 0) {
                    throw new IllegalStateException("RocksDB filter: " + f[5] + " entries, " + f[6]
                            + " tombstones left, want " + (data.n - deleted));
                }
                rows.add(new Row(round, data.correlated ? "correlated" : "uncorrelated", sel, "rocksdb-filter", 0,
                        Long.parseLong(f[2]), Long.parseLong(f[3]), Long.parseLong(f[4]), 0, 0, 0, deleted,
                        Double.NaN, Double.NaN, Long.parseLong(f[7]), Long.parseLong(f[8])));
                System.out.println("  " + format(rows.get(rows.size() - 1)));
            }
        }
        if (p.waitFor() != 0) {
            throw new IllegalStateException("frocksdb child failed with exit code " + p.exitValue());
        }
        return rows;
    }

    static String format(Row r) {
        return String.format(Locale.ROOT, "round %d %-12s sel %7.4f%% %-20s h=%-3s %7d ms  read %10s  written %10s"
                        + "  dropped %6d rewritten %6d pages  freed %10s  lookup %s us", r.round, r.correlation,
                r.selectivity * 100, r.system,
                r.h == 0 ? "-" : Integer.toString(r.h), r.millis, mib(r.bytesRead), mib(r.bytesWritten),
                r.pagesDropped, r.pagesRewritten, mib(r.allocatedBefore - r.allocatedAfter),
                Double.isNaN(r.lookupMicros) ? "-" : String.format(Locale.ROOT, "%.2f", r.lookupMicros));
    }

    static String mib(long bytes) {
        return String.format(Locale.ROOT, "%.2f MiB", bytes / 1048576.0);
    }

    /** Something that writes a checkpoint of a database into a directory. */
    interface Checkpointer {
        void checkpoint(Path dir) throws Exception;
    }

    /**
     * A copy of a database in {@code copy} whose files no other link holds: a checkpoint (hard links) in a
     * scratch directory, copied file by file, the checkpoint deleted. Bytes the copy frees leave the disk.
     */
    static void freshCopy(Checkpointer source, Path work, Path copy) throws Exception {
        Path snapshot = work.resolve("snapshot");
        deleteTree(snapshot);
        deleteTree(copy);
        source.checkpoint(snapshot);
        OnDisk.copyUnlinked(snapshot, copy);
        deleteTree(snapshot);
    }

    static void deleteTree(Path p) throws IOException {
        if (!Files.exists(p)) {
            return;
        }
        try (Stream<Path> s = Files.walk(p)) {
            for (Path x : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(x);
            }
        }
    }

    /**
     * Arguments: {@code [quick|full] [output directory]}; {@code -Dlethe.bench.secondary.dth-ms} sets D_th
     * (default 500). Writes {@code secondary-deletes.csv} and {@code secondary-deletes.settings.csv}.
     */
    public static void main(String[] args) throws Exception {
        boolean full = args.length > 0 && args[0].equals("full");
        Path out = Path.of(args.length > 1 ? args[1] : "target/secondary-deletes");
        Files.createDirectories(out);
        Duration threshold = Duration.ofMillis(Long.getLong("lethe.bench.secondary.dth-ms", 500));
        int n = full ? 1_000_000 : 200_000;
        int[] hs = full ? new int[] {1, 4, 8, 16, 64} : new int[] {1, 8};
        double[] sels = full ? new double[] {0.0001, 0.001, 0.01, 0.1, 1.0 / 7} : new double[] {0.001, 1.0 / 7};
        Path work = Files.createTempDirectory("lethe-secondary-bench");
        System.out.printf(Locale.ROOT, "Secondary range deletes: %d entries, D_th %d ms, h %s, selectivities %s%n", n,
                threshold.toMillis(), java.util.Arrays.toString(hs), java.util.Arrays.toString(sels));
        List<Row> rows = new ArrayList<>();
        for (boolean correlated : new boolean[] {false, true}) {
            DataSet data = new DataSet(n, correlated, 42);
            for (int round = 1; round <= ROUNDS; round++) {
                System.out.printf("%s delete keys, round %d of %d%n", correlated ? "correlated" : "uncorrelated",
                        round, ROUNDS);
                // Interleaved: Lethe first in odd rounds, RocksDB first in even ones.
                if (round % 2 == 0) {
                    rows.addAll(rocks(round, data, sels, work));
                    rows.addAll(rocksFilter(round, data, sels, work));
                }
                for (int h : hs) {
                    rows.addAll(lethe(round, data, h, sels, threshold, work));
                }
                if (round % 2 == 1) {
                    rows.addAll(rocks(round, data, sels, work));
                    rows.addAll(rocksFilter(round, data, sels, work));
                }
            }
        }
        deleteTree(work);
        try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(out.resolve("secondary-deletes.csv")))) {
            w.println("round,correlation,selectivity,system,h,millis,bytes_read,bytes_written,pages_dropped,"
                    + "page_bytes_dropped,pages_rewritten,deleted,lookup_us,lookup_bytes,allocated_before,"
                    + "allocated_after");
            for (Row r : rows) {
                w.printf(Locale.ROOT, "%d,%s,%f,%s,%d,%d,%d,%d,%d,%d,%d,%d,%f,%f,%d,%d%n", r.round, r.correlation,
                        r.selectivity, r.system, r.h, r.millis, r.bytesRead, r.bytesWritten, r.pagesDropped,
                        r.pageBytesDropped, r.pagesRewritten, r.deleted, r.lookupMicros, r.lookupBytes,
                        r.allocatedBefore, r.allocatedAfter);
            }
        }
        EngineBenchmarkRunner.writeSettings(out.resolve("secondary-deletes.settings.csv"), new String[][] {
            {"what", "delete every entry whose delete key is below a cut (a share of the database: the"
                    + " selectivity), measured until the data is physically gone from every file"},
            {"data", String.format(Locale.ROOT, "%,d entries, 16 B keys, 100 B values whose first 8 bytes are the"
                    + " delete key (Flink's TTL layout), inserted in random order, compacted into a settled tree", n)},
            {"delete keys", "uniform in [0, 10^6): uncorrelated with the sort key (a hash of it) or correlated (its"
                    + " rank, scaled)"},
            {"lethe", "AdvanceHorizon to the cut, D_th " + threshold.toMillis() + " ms; h = pages per delete tile "
                    + java.util.Arrays.toString(hs)},
            {"rocksdb", "scan (iterate, point-delete, flush, full compaction), filter (Flink's TTL compaction filter"
                    + " from frocksdbjni, then full compaction), deleterange (correlated keys only: DeleteFilesInRange"
                    + " on the range, one range tombstone, flush, a compaction of the range alone, its last level"
                    + " included); the best of them per selectivity is the comparison"},
            {"gone", "the files hold exactly the live entries and no tombstone (checked on both sides); freed bytes"
                    + " = blocks allocated by the table files before the delete - after it (stat, once the count"
                    + " stops changing), on a copy whose files have one link each, so nothing else holds the blocks"},
            {"budgets", "8 MiB write buffers, 16 MiB cache, level 1 of 32 MiB, T = 10, 8 MiB files, 4 KiB pages,"
                    + " Bloom 10 bits/key, no compression on either side, no WAL"},
            {"lookups", LOOKUPS + " point lookups of live keys afterwards: mean time and page bytes read"},
            {"rounds", ROUNDS + " per delete-key correlation: every system once per round, Lethe first in odd rounds"
                    + " and RocksDB first in even ones; each round loads its own trees"},
        });
        System.out.println("wrote " + out.resolve("secondary-deletes.csv"));
    }
}
