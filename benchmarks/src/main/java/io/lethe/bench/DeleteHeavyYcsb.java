package io.lethe.bench;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.locks.LockSupport;

/**
 * A delete-heavy YCSB-A variant, Lethe with FADE against rocksdbjni in the
 * variants an expert would try ({@link YcsbRocks#VARIANTS}), same memory budgets, in one process: 50 %
 * lookups, 50 % writes of which a share are point deletes, uniform keys.
 *
 * <p>Per run: load N keys, then run operations at a fixed rate for 5 D_th (wall clock: D_th is a
 * wall-clock duration, as RocksDB's ttl is one, in whole seconds), so every system does the same work
 * over the same time and tombstones can grow older than D_th. Count tombstones, flush and wait until
 * no background work runs or is pending, measure sizes, stay idle for 1.2 D_th, count tombstones
 * again. Space amplification = live table bytes after the flush / logical bytes of the live keys;
 * write amplification = bytes written by flushes and compactions (the final flush included) / bytes
 * the workload wrote. Tombstone ages come from write times: Lethe's own per tombstone; for RocksDB,
 * which keeps none, from the sequence numbers of a file's newest and oldest entries, which bound its
 * tombstones' ages (see {@link YcsbEngine.FileTombstones}).
 *
 * <p>Arguments: {@code [quick|full] [output directory]}; {@code -Dlethe.bench.ycsb.dth-seconds} sets
 * D_th and {@code -Dlethe.bench.ycsb.rate} the operations per second. Quick: 150 k keys, 5 % deletes,
 * D_th 1 s, 120 k operations/s. Full: 500 k keys, 2, 5 and 10 % deletes, D_th 6 s, 100 k
 * operations/s. Two rounds, systems interleaved.
 */
public final class DeleteHeavyYcsb {
    static final int KEY_BYTES = 16;
    static final int VALUE_BYTES = 100;
    static final long WRITE_BUFFER = 8L << 20;
    static final long CACHE = 16L << 20;
    static final long LEVEL1 = 32L << 20;
    static final long TARGET_FILE = 8L << 20;
    /** The run phase lasts this many D_th. */
    static final int RUN_THRESHOLDS = 5;

    static final List<String> SYSTEMS = List.of("lethe", "rocksdb", "rocksdb-ttl", "rocksdb-periodic",
            "rocksdb-deletion-collector");

    /** One run's parameters. */
    record Workload(int keys, int deletePercent, long rate, Duration threshold) {
        long ops() {
            return rate * RUN_THRESHOLDS * threshold.toMillis() / 1000;
        }
    }

    record Row(int round, String system, int deletePercent, double spaceAmp, double writeAmp,
            double lookupsPerSec, double opsPerSec, long compactions, long compactionBytes, long tombstonesEnd,
            double maxAgeEnd, long overThresholdEnd, long tombstonesIdle, double maxAgeIdle, long overThresholdIdle,
            double threshold, List<YcsbEngine.FileTombstones> fileTombstones) {}

    static byte[] key(long i) {
        return String.format("user%012d", i).getBytes();
    }

    static YcsbEngine open(String system, Path dir, Workload w) throws Exception {
        if (system.equals("lethe")) {
            return new YcsbLethe(dir, w.threshold());
        }
        String variant = system.equals("rocksdb") ? "plain" : system.substring("rocksdb-".length());
        return new YcsbRocks(dir, variant, w.threshold(), w.deletePercent());
    }

    /** Tombstones in files whose age, as {@link YcsbEngine.FileTombstones#ageMicros} counts it, exceeds D_th. */
    static long overThreshold(YcsbEngine.Measure m, Duration threshold) {
        long limit = threshold.toNanos() / 1000;
        return m.files().stream().filter(f -> f.ageMicros() > limit).mapToLong(YcsbEngine.FileTombstones::count)
                .sum();
    }

    /** What the run phase did: user bytes written, lookups and the time they took, its length. */
    private static final class Tally {
        long userBytes;
        long lookups;
        long lookupNanos;
        double seconds;
    }

    static Row run(int round, String system, Workload w, Path root) throws Exception {
        Path dir = Files.createTempDirectory(root, system + "-" + w.deletePercent() + "-");
        BitSet live = new BitSet(w.keys());
        WriteClock clock = new WriteClock();
        Tally tally = new Tally();
        Row row;
        try (YcsbEngine e = open(system, dir, w)) {
            SplittableRandom rnd = new SplittableRandom(42 + round);
            load(e, w, rnd, live, clock, tally);
            operate(e, w, rnd, live, clock, tally, round, system);
            YcsbEngine.Measure end = e.measure(clock);
            // Sizes with every live key in files (the memtables would hide up to 16 MB).
            e.flush();
            YcsbEngine.Measure flushed = e.measure(clock);
            long logical = (long) live.cardinality() * (KEY_BYTES + VALUE_BYTES);
            Thread.sleep(w.threshold().toMillis() * 12 / 10);
            YcsbEngine.Measure idle = e.measure(clock);
            row = new Row(round, system, w.deletePercent(), (double) flushed.liveBytes() / logical,
                    (double) flushed.writtenBytes() / tally.userBytes, tally.lookups / (tally.lookupNanos / 1e9),
                    w.ops() / tally.seconds, flushed.compactions(), flushed.compactionBytes(), end.tombstones(),
                    end.maxTombstoneAgeSeconds(), overThreshold(end, w.threshold()), idle.tombstones(),
                    idle.maxTombstoneAgeSeconds(), overThreshold(idle, w.threshold()),
                    w.threshold().toMillis() / 1000.0, end.files());
            System.out.println("  " + format(row));
        } finally {
            OnDisk.deleteTree(dir);
        }
        return row;
    }

    private static void load(YcsbEngine e, Workload w, SplittableRandom rnd, BitSet live, WriteClock clock,
            Tally tally) throws Exception {
        byte[] value = new byte[VALUE_BYTES];
        for (int i = 0; i < w.keys(); i++) {
            rnd.nextBytes(value);
            e.put(key(i), value);
            clock.tick();
            live.set(i);
            tally.userBytes += KEY_BYTES + VALUE_BYTES;
        }
    }

    /** The run phase, paced to {@code w.rate()} operations per second (a system that falls behind runs flat out). */
    private static void operate(YcsbEngine e, Workload w, SplittableRandom rnd, BitSet live, WriteClock clock,
            Tally tally, int round, String system) throws Exception {
        byte[] value = new byte[VALUE_BYTES];
        long ops = w.ops();
        long start = System.nanoTime();
        long progressAt = ops / 4;
        for (long op = 0; op < ops; op++) {
            if (op % 256 == 0) {
                long due = start + (long) (op * 1e9 / w.rate());
                long ahead = due - System.nanoTime();
                if (ahead > 0) {
                    LockSupport.parkNanos(ahead);
                }
            }
            int k = rnd.nextInt(w.keys());
            int r = rnd.nextInt(100);
            if (r < 50) {
                long t = System.nanoTime();
                e.get(key(k));
                tally.lookupNanos += System.nanoTime() - t;
                tally.lookups++;
            } else if (r < 50 + w.deletePercent()) {
                e.delete(key(k));
                clock.tick();
                live.clear(k);
                tally.userBytes += KEY_BYTES;
            } else {
                rnd.nextBytes(value);
                e.put(key(k), value);
                clock.tick();
                live.set(k);
                tally.userBytes += KEY_BYTES + VALUE_BYTES;
            }
            if (op + 1 == progressAt && op + 1 < ops) {
                System.out.printf(Locale.ROOT, "  round %d %-26s %2d%% deletes: %3d%% of the operations%n", round,
                        system, w.deletePercent(), (op + 1) * 100 / ops);
                progressAt += ops / 4;
            }
        }
        tally.seconds = (System.nanoTime() - start) / 1e9;
    }

    static final String HEADER = String.format(Locale.ROOT,
            "round %-26s %4s %9s %9s %11s %9s %5s %10s %9s %8s %10s %9s %8s", "system", "del%", "space-amp",
            "write-amp", "lookups/s", "ops/s", "comp", "tomb(end)", "age(end)", ">D_th", "tomb(idle)", "age(idle)",
            ">D_th");

    static String format(Row r) {
        return String.format(Locale.ROOT, "%5d %-26s %4d %9.2f %9.2f %11.0f %9.0f %5d %10d %8.1fs %8d %10d %8.1fs %8d",
                r.round(), r.system(), r.deletePercent(), r.spaceAmp(), r.writeAmp(), r.lookupsPerSec(),
                r.opsPerSec(), r.compactions(), r.tombstonesEnd(), r.maxAgeEnd(), r.overThresholdEnd(),
                r.tombstonesIdle(), r.maxAgeIdle(), r.overThresholdIdle());
    }

    /**
     * Arguments: {@code [quick|full] [output directory]}. Writes {@code ycsb.csv}, {@code
     * ycsb-tombstone-ages.csv} (per round, system and delete share: each table file that held tombstones
     * at the end of the run, with its tombstones' age bounds and count) and {@code ycsb.settings.csv}.
     */
    public static void main(String[] args) throws Exception {
        boolean full = args.length > 0 && args[0].equals("full");
        Path out = Path.of(args.length > 1 ? args[1] : "target/ycsb");
        Files.createDirectories(out);
        int keys = full ? 500_000 : 150_000;
        Duration threshold = Duration.ofSeconds(Long.getLong("lethe.bench.ycsb.dth-seconds", full ? 6 : 1));
        long rate = Long.getLong("lethe.bench.ycsb.rate", full ? 100_000 : 120_000);
        int rounds = 2;
        int[] deletes = full ? new int[] {2, 5, 10} : new int[] {5};
        Path root = Files.createTempDirectory("lethe-delete-heavy");
        List<Row> rows = new ArrayList<>();
        System.out.printf(Locale.ROOT, "delete-heavy YCSB-A: %,d keys, %,d operations/s for %d s (%d D_th), D_th %d s,"
                + " %d rounds%n", keys, rate, RUN_THRESHOLDS * threshold.toSeconds(), RUN_THRESHOLDS,
                threshold.toSeconds(), rounds);
        System.out.println("  " + HEADER);
        for (int deletePercent : deletes) {
            Workload w = new Workload(keys, deletePercent, rate, threshold);
            for (int round = 1; round <= rounds; round++) {
                // Interleaved: every system once per round, the order turned each round.
                for (int i = 0; i < SYSTEMS.size(); i++) {
                    rows.add(run(round, SYSTEMS.get((i + round - 1) % SYSTEMS.size()), w, root));
                }
            }
        }
        Files.deleteIfExists(root);
        writeRows(out, rows);
        writeAges(out, rows);
        writeSettings(out, keys, rate, threshold, rounds);
    }

    private static void writeRows(Path out, List<Row> rows) throws IOException {
        try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(out.resolve("ycsb.csv")))) {
            w.println("round,system,delete_percent,threshold_s,space_amp,write_amp,lookups_per_s,ops_per_s,"
                    + "compactions,compaction_bytes_written,tombstones_end,max_tombstone_age_end_s,"
                    + "tombstones_over_dth_end,tombstones_idle,max_tombstone_age_idle_s,tombstones_over_dth_idle");
            for (Row r : rows) {
                w.println(String.format(Locale.ROOT, "%d,%s,%d,%.1f,%.4f,%.4f,%.0f,%.0f,%d,%d,%d,%.1f,%d,%d,%.1f,%d",
                        r.round(), r.system(), r.deletePercent(), r.threshold(), r.spaceAmp(), r.writeAmp(),
                        r.lookupsPerSec(), r.opsPerSec(), r.compactions(), r.compactionBytes(), r.tombstonesEnd(),
                        r.maxAgeEnd(), r.overThresholdEnd(), r.tombstonesIdle(), r.maxAgeIdle(),
                        r.overThresholdIdle()));
            }
        }
    }

    private static void writeAges(Path out, List<Row> rows) throws IOException {
        try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(out.resolve("ycsb-tombstone-ages.csv")))) {
            w.println("round,system,delete_percent,file_age_s,file_age_upper_s,tombstones");
            for (Row r : rows) {
                for (YcsbEngine.FileTombstones f : r.fileTombstones()) {
                    w.println(String.format(Locale.ROOT, "%d,%s,%d,%.3f,%.3f,%d", r.round(), r.system(),
                            r.deletePercent(), f.ageMicros() / 1e6, f.ageUpperMicros() / 1e6, f.count()));
                }
            }
        }
    }

    private static void writeSettings(Path out, int keys, long rate, Duration threshold, int rounds)
            throws IOException {
        List<String> variants = YcsbRocks.VARIANTS.stream()
                .map(v -> (v.equals("plain") ? "rocksdb" : "rocksdb-" + v) + " (" + YcsbRocks.describe(v) + ")")
                .toList();
        EngineBenchmarkRunner.writeSettings(out.resolve("ycsb.settings.csv"), new String[][] {
            {"what", "a delete-heavy YCSB-A variant: load, then 50 % lookups and 50 % writes, a share of"
                    + " all operations being point deletes; uniform keys; wall-clock time"},
            {"data", String.format(Locale.ROOT, "%,d keys of 16 B with 100 B values loaded, then %,d operations/s"
                    + " for %d D_th (%,d operations), the same for every system", keys, rate, RUN_THRESHOLDS,
                    new Workload(keys, 0, rate, threshold).ops())},
            {"delete persistence threshold", threshold.toSeconds() + " s (Lethe's D_th; the RocksDB variants' ttl"
                    + " and periodic_compaction_seconds)"},
            {"systems", "lethe (FADE); " + String.join("; ", variants)},
            {"budgets", "8 MiB write buffers (two), 16 MiB cache, dynamic level targets (RocksDB's"
                    + " level_compaction_dynamic_level_bytes, its default; Lethe's dynamicLevelBytes), level base 32"
                    + " MiB (RocksDB's max_bytes_for_level_base, Lethe's level1Bytes), size ratio 10, 8 MiB files,"
                    + " 4 KiB pages/blocks, Bloom 10 bits/key, no compression (Lethe: Compression.NONE; RocksDB: NO_COMPRESSION on every"
                    + " level), no WAL"},
            {"verdicts", "each metric against the RocksDB variant best at it in the same round"},
            {"ops/s", "the rate achieved (the target unless a system fell behind); lookups/s = lookups / time"
                    + " spent in them"},
            {"space amplification", "live table bytes after a final flush, once neither engine runs or has pending"
                    + " background work (both wait the same way) / bytes of the live keys and values"},
            {"write amplification", "bytes written by flushes and compactions / bytes the workload wrote"},
            {"tombstones", "at the end of the run (before the flush) and after idling 1.2 D_th, memtables"
                    + " included. Ages from write times: Lethe, each file's oldest tombstone (exact), all of a file's"
                    + " tombstones counted at that age; RocksDB, which keeps no write time per entry, the write time"
                    + " of the file's newest entry (from its sequence number), so each of its tombstones is at least"
                    + " that old. Both lean against Lethe: its counts older than D_th are upper bounds, RocksDB's"
                    + " lower bounds"},
            {"rounds", rounds + " per delete share, systems interleaved (order rotated each round)"},
        });
    }
}
