package io.lethe.bench;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * Runs {@link EngineBenchmark} in rounds: every round measures each operation on both engines, one
 * JVM fork per engine and operation, the engines' order alternating from round to round, so a
 * Lethe/RocksDB ratio per round compares runs made minutes apart at most. Writes run on one
 * thread, reads on 1, 2 and 4 threads sharing one database. Prints each round's table and writes
 * {@code engine-ops.csv} ({@code round,operation,engine,ops_per_s,score_error}, the error being
 * JMH's 99.9 % confidence half-width; a read's operation names its threads, e.g. {@code getHit x2})
 * and {@code engine-ops.settings.csv} to the output directory.
 *
 * <p>Arguments: {@code [quick|full] [output directory] [keys]}. Quick: 200 k keys, reads on 1 and 2
 * threads, one round of one 1 s iteration without warmup (no confidence interval: the quick mode
 * only shows that every operation runs). Full: 1 M keys, three rounds of two 2 s warmups and ten 1 s iterations (enough
 * for a confidence interval narrow enough to decide a verdict).
 */
public final class EngineBenchmarkRunner {
    /** The read operations, also run on several threads. */
    static final String READS = "(getHit|getMiss|multiGet100|seekNext100)";
    /** The reads measured also on a tree as its load left it (quick mode: misses only). */
    static final String LOADED_READS = "(getHit|getMiss|seekNext100)";

    private EngineBenchmarkRunner() {}

    /** The operation's name, with its threads ({@code getHit x2}) when a read ran on more than one. */
    static String operation(RunResult r) {
        String op = r.getParams().getBenchmark().replaceAll(".*\\.", "");
        int threads = r.getParams().getThreads();
        String name = threads == 1 ? op : op + " x" + threads;
        String helpers = r.getParams().getParam("multiGetHelpers");
        if (helpers != null && !helpers.equals("0")) {
            name += " / " + helpers + (helpers.equals("1") ? " helper thread" : " helper threads");
        }
        return "loaded".equals(r.getParams().getParam("tree")) ? name + " / unsettled" : name;
    }

    public static void main(String[] args) throws Exception {
        boolean full = args.length > 0 && args[0].equals("full");
        Path out = Path.of(args.length > 1 ? args[1] : "target/engine-ops");
        String keys = args.length > 2 ? args[2] : full ? "1000000" : "200000";
        int rounds = full ? 3 : 1;
        int warmups = full ? 2 : 0;
        int iterations = full ? 10 : 1;
        int seconds = 1;
        int warmupSeconds = full ? 2 : 1;
        String rangeDeleteKeys = full ? "1000000" : "20000";
        Timing timing = new Timing(warmups, warmupSeconds, iterations, seconds);
        Files.createDirectories(out);
        List<String> rows = new ArrayList<>();
        for (int round = 1; round <= rounds; round++) {
            System.out.printf("engine operations: round %d of %d%n", round, rounds);
            String[] order = round % 2 == 1 ? new String[] {"lethe", "rocksdb"} : new String[] {"rocksdb", "lethe"};
            for (int threads : full ? new int[] {1, 2, 4} : new int[] {1, 2}) {
                String ops = threads == 1 ? ".*" : READS;
                OptionsBuilder opts = timing.options(EngineBenchmark.class.getSimpleName() + "\\." + ops + "$", order);
                opts.param("keys", keys).threads(threads);
                addRows(rows, round, new Runner(opts.build()).run(), EngineBenchmarkRunner::operation);
            }
            helpedMultiGet(rows, round, keys, timing);
            unsettledReads(rows, round, full, keys, timing, order);
            // Range deletes: the baseline once, then each pattern with its tombstones in either place.
            String rd = RangeDeleteBenchmark.class.getSimpleName() + "\\..*";
            OptionsBuilder none = timing.options(rd, order);
            none.param("keys", rangeDeleteKeys).param("deletes", "none").param("tombstones", "memtable");
            addRows(rows, round, new Runner(none.build()).run(), EngineBenchmarkRunner::rangeDeleteOperation);
            OptionsBuilder some = timing.options(rd, order);
            // Quick: tombstones flushed only, to keep CI's run short.
            String[] places = full ? new String[] {"memtable", "flushed"} : new String[] {"flushed"};
            some.param("keys", rangeDeleteKeys).param("deletes", "small", "long").param("tombstones", places);
            addRows(rows, round, new Runner(some.build()).run(), EngineBenchmarkRunner::rangeDeleteOperation);
        }
        try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(out.resolve("engine-ops.csv")))) {
            w.println("round,operation,engine,ops_per_s,score_error");
            rows.forEach(w::println);
        }
        writeSettings(out.resolve("engine-ops.settings.csv"), new String[][] {
            {"what", "JMH throughput of single operations on a loaded database: writes on one thread, reads"
                    + " on 1, 2 and 4 threads (x2, x4) sharing it" + (full ? "" : " (quick mode: 1 and 2)")},
            {"keys", keys + " keys of 16 B at even positions with random 100 B values (4096 distinct, so they"
                    + " do not compress), loaded in a scattered order, then flushed and compacted completely;"
                    + " both engines measured once no flush or compaction runs or is pending"},
            {"unsettled", "operations marked / unsettled: the same load, measured as it left the tree once no"
                    + " flush or compaction ran or was pending, without a flush or a full compaction: the latest"
                    + " writes in a large memtable, the rest in files as background compaction left them"
                    + (full ? "" : " (quick mode: getMiss on one thread)")},
            {"operations", "put (overwrite), getHit, getMiss (an absent key at an odd position: inside the key"
                    + " range, so Bloom filters decide), multiGet100 (100 loaded keys in random order in one batched"
                    + " lookup, counted per key: Lethe's multiGet with a reused MultiGetBatch, RocksDB's"
                    + " multiGetAsList), deleteAndReinsert, seekNext100 (seek + 100 next)"},
            {"range deletes", rangeDeleteKeys + " keys of 16 B with random 500 B values, loaded and settled; then"
                    + " no range delete (the baseline), 10% of the keys deleted in ranges of 10 keys (one per 100 keys)"
                    + " or 75% in 15 long ranges; tombstones left in the memtable or flushed to a file"
                    + (full ? "" : " (quick mode: flushed only)") + " (no compaction,"
                    + " so the deleted data stays below them). get: a uniformly random key (found or not, all counted);"
                    + " scan100: a seek to a random key and 100 next, without a bound; scanRange100: every entry of"
                    + " the 100 keys from a random key (fewer after the deletes), through an iterator bounded above by"
                    + " the first key past them (Lethe's ReadOptions upper bound, RocksDB's iterate_upper_bound);"
                    + " same engine settings as above"},
            {"Lethe", "64 MiB memtable, 32 MiB page cache, 4 KiB pages, Bloom filters 10 bits/key (and its"
                    + " memtables' key filter, always on), no WAL, no compression (Compression.NONE),"
                    + " multiGetThreads 0 (a multiGet runs on the calling thread alone, as rocksdbjni's"
                    + " multiGetAsList; Lethe's default of 1 helper thread, a second core, is measured apart as"
                    + " multiGet100 / 1 helper thread, Lethe only)"},
            {"RocksDB", "rocksdbjni, 64 MiB write buffer (2 of them), 32 MiB LRU block cache, 4 KiB blocks,"
                    + " Bloom filter 10 bits/key, a memtable Bloom filter over whole keys"
                    + " (memtable_whole_key_filtering, memtable_prefix_bloom_size_ratio 0.02; off by default) as"
                    + " Lethe's memtables have one, no WAL, compression NO_COMPRESSION on every level including"
                    + " the bottommost (rocksdbjni's default would be Snappy), other options at their defaults"},
            {"verdict", "even when the engines' JMH 99.9 % confidence intervals overlap in at least half of the"
                    + " rounds, or the per-round ratios lie on both sides of 1"},
            {"rounds", rounds + " (engine order alternating), " + warmups + " x " + warmupSeconds + " s warmup, " + iterations
                    + " x " + seconds + " s measured, one JVM fork per engine and operation"},
        });
    }

    /**
     * Lethe's multiGet with its default helper thread, which uses a second core beside the caller:
     * Lethe alone (rocksdbjni has no such option), to set against its single gets, not against
     * rocksdbjni.
     */
    private static void helpedMultiGet(List<String> rows, int round, String keys, Timing timing) throws Exception {
        OptionsBuilder opts = timing.options(EngineBenchmark.class.getSimpleName() + "\\.multiGet100$",
                new String[] {"lethe"});
        opts.param("keys", keys).param("multiGetHelpers", "1");
        addRows(rows, round, new Runner(opts.build()).run(), EngineBenchmarkRunner::operation);
    }

    /**
     * The reads on the tree as the load left it: a full memtable over files not compacted on purpose
     * (the quick mode: misses on one thread).
     */
    private static void unsettledReads(List<String> rows, int round, boolean full, String keys, Timing timing,
            String[] order) throws Exception {
        for (int threads : full ? new int[] {1, 2} : new int[] {1}) {
            String ops = full ? LOADED_READS : "getMiss";
            OptionsBuilder opts = timing.options(EngineBenchmark.class.getSimpleName() + "\\." + ops + "$", order);
            opts.param("keys", keys).param("tree", "loaded").threads(threads);
            addRows(rows, round, new Runner(opts.build()).run(), EngineBenchmarkRunner::operation);
        }
    }

    /** Writes {@code key,value} lines (the value may hold commas: readers split at the first one). */
    static void writeSettings(Path file, String[][] settings) throws IOException {
        try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(file))) {
            w.println("key,value");
            for (String[] s : settings) {
                w.println(s[0] + "," + s[1]);
            }
        }
    }

    /** JMH's iteration counts and times. */
    record Timing(int warmups, int warmupSeconds, int iterations, int seconds) {
        OptionsBuilder options(String include, String[] engines) {
            OptionsBuilder opts = new OptionsBuilder();
            opts.include(include)
                    .param("engine", engines)
                    .forks(1)
                    .jvmArgsAppend("-Xmx2g")
                    .warmupIterations(warmups)
                    .warmupTime(TimeValue.seconds(warmupSeconds))
                    .measurementIterations(iterations)
                    .measurementTime(TimeValue.seconds(seconds));
            return opts;
        }
    }

    /** Prints the results and adds them as CSV rows, each named by {@code name}. */
    static void addRows(List<String> rows, int round, Collection<RunResult> results,
            Function<RunResult, String> name) {
        System.out.println(table(results, name));
        for (RunResult r : results) {
            double err = r.getPrimaryResult().getScoreError();
            rows.add(String.format(Locale.ROOT, "%d,%s,%s,%.1f,%.1f", round, name.apply(r),
                    r.getParams().getParam("engine"), r.getPrimaryResult().getScore(), Double.isNaN(err) ? 0 : err));
        }
    }

    /** {@code get / no range delete}, {@code scan100 / 10% in small ranges (memtable)}, ... (no commas: CSV). */
    static String rangeDeleteOperation(RunResult r) {
        String op = r.getParams().getBenchmark().replaceAll(".*\\.", "");
        String deletes = r.getParams().getParam("deletes");
        String where = " (" + r.getParams().getParam("tombstones") + ")";
        return switch (deletes) {
            case "none" -> op + " / no range delete";
            case "small" -> op + " / 10% in small ranges" + where;
            default -> op + " / 75% in long ranges" + where;
        };
    }

    static String table(Collection<RunResult> results, Function<RunResult, String> name) {
        Map<String, double[]> byOp = new TreeMap<>();  // op -> {lethe, letheErr, rocks, rocksErr}
        for (RunResult r : results) {
            String op = name.apply(r);
            String engine = r.getParams().getParam("engine");
            double score = r.getPrimaryResult().getScore();
            double err = r.getPrimaryResult().getScoreError();
            double[] row = byOp.computeIfAbsent(op, k -> new double[4]);
            int base = engine.equals("lethe") ? 0 : 2;
            row[base] = score;
            row[base + 1] = Double.isNaN(err) ? 0 : err;
        }
        List<String> lines = new ArrayList<>();
        lines.add(String.format("%-34s %16s %16s %14s", "operation", "lethe ops/s", "rocksdb ops/s", "lethe/rocksdb"));
        for (Map.Entry<String, double[]> e : byOp.entrySet()) {
            double[] v = e.getValue();
            lines.add(String.format("%-34s %9.0f ±%5.0f %9.0f ±%5.0f %13.2fx", e.getKey(), v[0], v[1], v[2], v[3],
                    v[2] == 0 ? Double.NaN : v[0] / v[2]));
        }
        return String.join(System.lineSeparator(), lines);
    }
}
