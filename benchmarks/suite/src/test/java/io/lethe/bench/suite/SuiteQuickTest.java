package io.lethe.bench.suite;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The suite's quick mode, as {@code benchmarks/run.sh quick} runs it, on the modules this build
 * packaged: every part must finish and leave results for every system it compares, and the report
 * must show them with charts that open. No number is checked against a goal: quick runs are too
 * short and this machine too shared for that (the full run's report is where numbers are read).
 */
class SuiteQuickTest {
    static final Path ROOT = Path.of("../..").toAbsolutePath().normalize();
    static final Path OUT = Path.of("target/bench-quick").toAbsolutePath();
    static final Path REPORT = OUT.resolve("report.md");
    static final Set<String> BACKENDS = Set.of("lethe", "rocksdb", "rocksdb-heap-timers", "forst", "hashmap");
    static List<String> failed;

    @BeforeAll
    static void runQuickSuite() throws Exception {
        System.setProperty("java.awt.headless", "true");
        failed = new Suite(ROOT, false, OUT).run(Set.of(), "quick", REPORT);
    }

    @Test
    void everyPartFinishedWithResults() {
        assertEquals(List.of(), failed, "parts that failed (logs in " + OUT + ")");
    }

    @Test
    void everySystemHasResults() throws Exception {
        assertEquals(Set.of("lethe", "rocksdb"), column(OUT.resolve("engine-ops.csv"), "engine"));
        // Lethe's multiGet ran on the calling thread against rocksdbjni, and with its helper thread apart.
        assertTrue(column(OUT.resolve("engine-ops.csv"), "operation")
                .containsAll(Set.of("multiGet100", "multiGet100 / 1 helper thread")));
        assertEquals(Set.of("lethe", "rocksdb", "rocksdb-ttl", "rocksdb-periodic",
                "rocksdb-deletion-collector"),
                column(OUT.resolve("ycsb.csv"), "system"));
        // Files holding tombstones at the end of a run; Lethe's may all be gone already, plain RocksDB's are not.
        assertTrue(column(OUT.resolve("ycsb-tombstone-ages.csv"), "system").contains("rocksdb"), "tombstone ages");
        assertTrue(column(OUT.resolve("secondary-deletes.csv"), "system")
                .containsAll(Set.of("lethe", "rocksdb-scan", "rocksdb-deleterange")));
        assertEquals(Set.of("1", "2"), column(OUT.resolve("secondary-deletes.csv"), "round"));
        assertEquals(Set.of("tumbling", "sliding", "tumbling-paced", "ttl", "timers"),
                column(OUT.resolve("jobs.csv"), "job"));
        // The timers job's watermark step was timed on every backend.
        Set<String> steps = column(where(OUT.resolve("jobs.csv"), "job", "timers"), "fire_ms");
        assertTrue(!steps.isEmpty() && !steps.contains(""), "watermark steps " + steps);
        assertEquals(BACKENDS, column(OUT.resolve("jobs.csv"), "backend"));
        assertTrue(Files.size(OUT.resolve("jobs-state-size.csv")) > 1000, "state size samples");
        // Every run completes at least Flink's final checkpoint, after its input ended.
        assertEquals(BACKENDS, column(OUT.resolve("jobs-checkpoints.csv"), "backend"));
        assertEquals(Set.of("lethe", "rocksdb", "forst"),
                column(where(OUT.resolve("largestate.csv"), "job", "keyed"), "backend"));
        assertEquals(Set.of("lethe", "lethe-adaptor", "rocksdb", "forst"),
                column(where(OUT.resolve("largestate.csv"), "job", "keyed-async"), "backend"));
        assertEquals(Set.of("lethe", "rocksdb", "rocksdb-heap-timers", "forst"),
                column(where(OUT.resolve("largestate.csv"), "job", "windowed"), "backend"));
        assertTrue(column(OUT.resolve("largestate-timeline.csv"), "phase").containsAll(Set.of("load", "steady",
                "cold")), "timeline phases");
        // Lethe's rows count the checkpoints that linked a flush (a number); the peers' leave it empty.
        Set<String> flushes = column(where(OUT.resolve("largestate.csv"), "backend", "lethe"), "checkpoint_flushes");
        assertTrue(!flushes.isEmpty() && flushes.stream().allMatch(v -> v.matches("[0-9]+")),
                "Lethe's checkpoint flushes " + flushes);
        assertEquals(Set.of(""), column(where(OUT.resolve("largestate.csv"), "backend", "forst"),
                "checkpoint_flushes"), "ForSt's checkpoint flushes");
        assertEquals(Set.of("q4", "q5", "q7", "q8", "q9", "q11", "q16", "q18", "q19", "q20"),
                column(OUT.resolve("nexmark.csv"), "query"));
        assertEquals(BACKENDS, column(OUT.resolve("nexmark.csv"), "backend"));
        assertEquals(Set.of("q4", "q18", "q20"), column(OUT.resolve("nexmark-async.csv"), "query"));
        assertEquals(Set.of("lethe", "lethe-adaptor", "forst", "rocksdb"),
                column(OUT.resolve("nexmark-async.csv"), "backend"));
        for (String lethe : List.of("lethe", "lethe-adaptor")) {
            assertEquals(Set.of("true"), column(where(OUT.resolve("nexmark-async.csv"), "backend", lethe), "async_state"));
        }
        assertEquals(Set.of("false"),
                column(where(OUT.resolve("nexmark-async.csv"), "backend", "rocksdb"), "async_state"));
        assertEquals(Set.of("lethe", "rocksdb", "rocksdb-tuned", "rocksdb-zstd"),
                column(OUT.resolve("streams.csv"), "system"));
        assertEquals(Set.of("main", "drain"), column(OUT.resolve("streams-timeline.csv"), "phase"));
        assertTrue(column(OUT.resolve("environment.csv"), "key").containsAll(Set.of("cpu", "java", "flink",
                "rocksdbjni")));
    }

    @Test
    void reportShowsEverySectionWithChartsThatOpen() throws Exception {
        String report = Files.readString(REPORT);
        assertTrue(!report.contains("not run"), "a section was not run");
        Matcher m = Pattern.compile("!\\[[^\\]]*\\]\\(([^)]+\\.png)\\)").matcher(report);
        int charts = 0;
        while (m.find()) {
            Path png = REPORT.getParent().resolve(m.group(1));
            BufferedImage img = ImageIO.read(png.toFile());
            assertTrue(img != null && img.getWidth() > 100, "chart " + png);
            charts++;
        }
        assertTrue(charts >= 8, charts + " charts");
    }

    @Test
    void jobRunsMeasuredWhatTheirModeMeasures() throws Exception {
        List<String> lines = Files.readAllLines(OUT.resolve("jobs.csv"));
        List<String> header = List.of(lines.get(0).split(","));
        for (String line : lines.subList(1, lines.size())) {
            String[] f = line.split(",", -1);
            boolean paced = !f[header.indexOf("rate")].equals("0");
            String measured = f[header.indexOf(paced ? "latency_p99_us" : "steady_records_per_s")];
            assertFalse(measured.isEmpty(), (paced ? "latency" : "steady records/s") + " missing: " + line);
        }
    }

    /**
     * Every large-state run measured each phase and restored from its checkpoint and its savepoint;
     * the keyed job's lookups found the state they loaded, before and after the restore.
     */
    @Test
    void largeStateRunsMeasuredEveryPhase() throws Exception {
        List<String> lines = Files.readAllLines(OUT.resolve("largestate.csv"));
        List<String> header = List.of(lines.get(0).split(","));
        for (String line : lines.subList(1, lines.size())) {
            String[] f = line.split(",", -1);
            for (String c : List.of("steady_records_per_s", "latency_p99_us", "restore_checkpoint_ms",
                    "cold_records_per_s", "checkpoint_full_bytes")) {
                assertFalse(f[header.indexOf(c)].isEmpty(), c + " missing: " + line);
            }
            // Each run in a 4 GiB memory cgroup where the machine allows one (the settings say when it does not).
            String limit = f[header.indexOf("container_limit_bytes")];
            assertTrue(limit.isEmpty() || limit.equals(Long.toString(4L << 30)), "container limit: " + line);
            // ForSt 2.2 refuses canonical savepoints, and Flink 2.2 refuses them for asynchronous state; every
            // other run takes one and restores from it.
            boolean async = f[header.indexOf("job")].endsWith("-async");
            boolean forst = f[header.indexOf("backend")].equals("forst");
            assertEquals(async ? "refused by Flink (asynchronous state)" : forst ? "refused by the backend"
                    : "canonical", f[header.indexOf("savepoint")], line);
            for (String c : List.of("savepoint_bytes", "restore_savepoint_ms")) {
                assertEquals(async || forst, f[header.indexOf(c)].isEmpty(), c + ": " + line);
            }
            if (f[header.indexOf("job")].startsWith("keyed")) {
                assertEquals("0", f[header.indexOf("lookups_missing_state")], "steady lookups without state: " + line);
                assertEquals("0", f[header.indexOf("cold_lookups_missing_state")], "lookups after restore: " + line);
                assertFalse(f[header.indexOf("cold_lookups")].equals("0"), "no lookups after the restore: " + line);
            }
        }
    }

    /**
     * Every Nexmark run finished, and every deterministic query gave the HashMap backend's result on every
     * backend (the others are marked, with the reason).
     */
    @Test
    void nexmarkResultsEqualTheHashMapBackends() throws Exception {
        for (String verdict : column(OUT.resolve("nexmark.csv"), "equal_to_hashmap")) {
            assertTrue(verdict.equals("yes") || verdict.equals("reference")
                    || verdict.startsWith("not deterministic: "), "a result differs or a run failed: " + verdict);
        }
    }

    /**
     * With asynchronous state, every run finished, and every deterministic query gave RocksDB's result
     * (with synchronous state) on Lethe's and ForSt's executors and Lethe through Flink's synchronous adaptor;
     * Lethe's executor was handed batches; the paced runs measured latency.
     */
    @Test
    void nexmarkAsyncResultsEqualRocksDbsWithSynchronousState() throws Exception {
        Path csv = OUT.resolve("nexmark-async.csv");
        for (String verdict : column(csv, "equal_to_rocksdb")) {
            assertTrue(verdict.equals("yes") || verdict.equals("reference")
                    || verdict.startsWith("not deterministic: "), "a result differs or a run failed: " + verdict);
        }
        for (String perBatch : column(where(csv, "backend", "lethe"), "async_requests_per_batch")) {
            assertTrue(Double.parseDouble(perBatch) >= 1, "requests per batch " + perBatch);
        }
        // The paced runs (q18 and q20 at 2,000 events/s) measured their results' latency on every backend.
        Path paced = where(csv, "paced_events_per_s", "2000");
        assertEquals(Set.of("q18", "q20"), column(paced, "query"));
        assertEquals(Set.of("lethe", "lethe-adaptor", "forst", "rocksdb"), column(paced, "backend"));
        for (String p99 : column(paced, "latency_p99_us")) {
            assertTrue(Double.parseDouble(p99) > 0, "latency p99 " + p99);
        }
    }

    /** A file holding the header of {@code csv} and its lines whose {@code name} column is {@code value}. */
    static Path where(Path csv, String name, String value) throws Exception {
        List<String> lines = Files.readAllLines(csv);
        int index = List.of(lines.get(0).split(",")).indexOf(name);
        Path selected = csv.resolveSibling(csv.getFileName() + "." + name + "-" + value);
        Files.write(selected, java.util.stream.Stream.concat(lines.stream().limit(1), lines.stream().skip(1)
                .filter(l -> l.split(",", -1)[index].equals(value))).toList());
        return selected;
    }

    /** The distinct values of the CSV column named {@code name} (cells split at commas, as the files are). */
    static Set<String> column(Path csv, String name) throws Exception {
        List<String> lines = Files.readAllLines(csv);
        int index = List.of(lines.get(0).split(",")).indexOf(name);
        assertTrue(index >= 0, csv + " has no column " + name + ": " + lines.get(0));
        Set<String> values = new TreeSet<>();
        for (String line : lines.subList(1, lines.size())) {
            String[] f = line.split(",", index + 2);
            if (f.length > index) {
                values.add(f[index]);
            }
        }
        return values;
    }
}
