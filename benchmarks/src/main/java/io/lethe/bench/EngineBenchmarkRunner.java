package io.lethe.bench;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * Runs {@link EngineBenchmark} for both engines in one JVM fork each, then prints one table with
 * the Lethe/RocksDB throughput ratio per operation (higher is better for Lethe).
 *
 * <p>Arguments: [quick|full] [keys]. Quick: 2 warmup and 3 measured iterations of 2 s.
 */
public final class EngineBenchmarkRunner {
    private EngineBenchmarkRunner() {}

    public static void main(String[] args) throws Exception {
        boolean full = args.length > 0 && args[0].equals("full");
        String keys = args.length > 1 ? args[1] : "1000000";
        ChainedOptionsBuilder opts = new OptionsBuilder()
                .include(EngineBenchmark.class.getSimpleName())
                .param("keys", keys)
                .forks(1)
                .jvmArgsAppend("-Xmx2g")
                .warmupIterations(full ? 3 : 2)
                .warmupTime(TimeValue.seconds(full ? 3 : 2))
                .measurementIterations(full ? 5 : 3)
                .measurementTime(TimeValue.seconds(full ? 5 : 2));
        Collection<RunResult> results = new Runner(opts.build()).run();
        System.out.println(table(results));
    }

    static String table(Collection<RunResult> results) {
        Map<String, double[]> byOp = new TreeMap<>();  // op -> {lethe, letheErr, rocks, rocksErr}
        for (RunResult r : results) {
            String op = r.getParams().getBenchmark().replaceAll(".*\\.", "");
            String engine = r.getParams().getParam("engine");
            double score = r.getPrimaryResult().getScore();
            double err = r.getPrimaryResult().getScoreError();
            double[] row = byOp.computeIfAbsent(op, k -> new double[4]);
            int base = engine.equals("lethe") ? 0 : 2;
            row[base] = score;
            row[base + 1] = Double.isNaN(err) ? 0 : err;
        }
        List<String> lines = new ArrayList<>();
        lines.add(String.format("%-20s %16s %16s %14s", "operation", "lethe ops/s", "rocksdb ops/s", "lethe/rocksdb"));
        for (Map.Entry<String, double[]> e : byOp.entrySet()) {
            double[] v = e.getValue();
            lines.add(String.format("%-20s %9.0f ±%5.0f %9.0f ±%5.0f %13.2fx", e.getKey(), v[0], v[1], v[2], v[3],
                    v[2] == 0 ? Double.NaN : v[0] / v[2]));
        }
        return String.join(System.lineSeparator(), lines);
    }
}
