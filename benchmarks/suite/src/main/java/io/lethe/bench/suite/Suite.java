package io.lethe.bench.suite;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

/**
 * The benchmark suite behind {@code benchmarks/run.sh}: runs every part in a child JVM of its own
 * (the engine benchmarks load rocksdbjni, the job benchmarks Flink's frocksdbjni; both define
 * {@code org.rocksdb}), one after another on this machine, with their progress and the suite's,
 * then writes the report with charts from the CSV files they left.
 *
 * <pre>
 * Suite quick|full [--out DIR] [--report FILE] [--only engine,ycsb,secondary,jobs,largestate,nexmark,nexmark-async,streams]
 * </pre>
 *
 * Quick (about 13 minutes, what CI runs): small data, short iterations; it shows that every part
 * works and produces results, not what the numbers are. Full: the data behind {@code
 * docs/benchmarks.md} (about 9.8 hours on two cores; the parts can run alone). Defaults: quick
 * writes to {@code target/bench-quick} with {@code report.md} there; full writes the CSV files and charts to {@code
 * docs/benchmarks/} and the report to {@code docs/benchmarks.md}. Exit code 1 when a part failed or
 * left no results (the others still run and the report still gets written).
 */
public final class Suite {
    /** One benchmark: what it writes, and how long it takes per mode (shown as progress). */
    record Part(String name, String title, String csv, String quickTime, String fullTime) {}

    static final List<Part> PARTS = List.of(
            new Part("engine", "engine point operations and scans (JMH, Lethe and rocksdbjni)", "engine-ops.csv",
                    "about 1.5 min", "about 60 min"),
            new Part("ycsb", "delete-heavy YCSB-A (FADE against RocksDB and its delete compactions)", "ycsb.csv",
                    "about 75 s", "about 21 min"),
            new Part("secondary", "secondary range deletes across delete tile sizes (KiWi against RocksDB)",
                    "secondary-deletes.csv", "about 40 s", "about 2.5 min"),
            new Part("jobs", "Flink jobs: windows, paced windows, TTL (Lethe, Flink's RocksDB twice, ForSt, HashMap)",
                    "jobs.csv", "about 2 min", "about 40 min"),
            new Part("largestate", "state far larger than memory: keyed (synchronous and asynchronous state) and windowed"
                    + " jobs, checkpoints, restores (Lethe, Flink's RocksDB, ForSt)", "largestate.csv", "about 3 min",
                    "about 6 hours"),
            new Part("nexmark", "Nexmark q4 q5 q7 q8 q9 q11 q16 q18 q19 q20 in Flink SQL (Lethe, Flink's RocksDB"
                    + " twice, ForSt, HashMap), results compared", "nexmark.csv", "about 3 min", "about 40 min"),
            new Part("nexmark-async", "Nexmark q4 q9 q18 q20 with asynchronous state (Lethe's and ForSt's executors,"
                    + " Lethe through Flink's synchronous adaptor, RocksDB with synchronous state; full: in a 2 GiB"
                    + " memory cgroup), results compared",
                    "nexmark-async.csv", "about 2 min", "about 45 min"),
            new Part("streams", "Kafka Streams windowed aggregation (Lethe's stores, Kafka Streams' RocksDB stores"
                    + " as shipped and tuned)", "streams.csv", "about 2 min", "about 60 min"));

    private final Path root;
    private final boolean full;
    private final Path out;

    Suite(Path root, boolean full, Path out) {
        this.root = root;
        this.full = full;
        this.out = out;
    }

    public static void main(String[] args) throws Exception {
        System.setProperty("java.awt.headless", "true");
        if (args.length == 0 || !(args[0].equals("quick") || args[0].equals("full"))) {
            System.err.println("usage: benchmarks/run.sh quick|full [--out DIR] [--report FILE]"
                    + " [--only engine,ycsb,secondary,jobs,largestate,nexmark,nexmark-async,streams], or benchmarks/run.sh report DIR [FILE]");
            System.exit(2);
        }
        boolean full = args[0].equals("full");
        Path root = Path.of(System.getProperty("lethe.root", ".")).toAbsolutePath().normalize();
        Path out = root.resolve(full ? "docs/benchmarks" : "target/bench-quick");
        Path report = null;
        Set<String> only = new TreeSet<>();
        for (int i = 1; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--out" -> out = Path.of(args[i + 1]).toAbsolutePath();
                case "--report" -> report = Path.of(args[i + 1]).toAbsolutePath();
                case "--only" -> only.addAll(List.of(args[i + 1].split(",")));
                default -> {
                    System.err.println("unknown option " + args[i]);
                    System.exit(2);
                }
            }
        }
        if (report == null) {
            report = full && out.equals(root.resolve("docs/benchmarks")) ? root.resolve("docs/benchmarks.md")
                    : out.resolve("report.md");
        }
        List<String> failed = new Suite(root, full, out).run(only, String.join(" ", args), report);
        if (!failed.isEmpty()) {
            System.out.println("FAILED: " + String.join(", ", failed));
            System.exit(1);
        }
    }

    /** Runs the parts (all when {@code only} is empty) and the report; returns the parts that failed. */
    List<String> run(Set<String> only, String arguments, Path report) throws Exception {
        Path benchJar = root.resolve("benchmarks/target/benchmarks.jar");
        Path jobClasses = root.resolve("benchmarks/jobs/target/classes");
        Path jobClasspath = root.resolve("benchmarks/jobs/target/classpath.txt");
        Path streamsClasses = root.resolve("benchmarks/streams/target/classes");
        Path streamsClasspath = root.resolve("benchmarks/streams/target/classpath.txt");
        for (Path p : List.of(benchJar, jobClasses, jobClasspath, streamsClasses, streamsClasspath)) {
            if (!Files.exists(p)) {
                throw new IllegalStateException(p + " is missing: build first (mvn -B install -DskipTests)");
            }
        }
        Files.createDirectories(out);
        String jobsCp = jobClasses + ":" + Files.readString(jobClasspath).trim();
        String streamsCp = streamsClasses + ":" + Files.readString(streamsClasspath).trim();
        String mode = full ? "full" : "quick";
        writeEnvironment(arguments, jobsCp);

        List<Part> parts = PARTS.stream().filter(p -> only.isEmpty() || only.contains(p.name())).toList();
        List<String> failed = new ArrayList<>();
        long suiteStart = System.nanoTime();
        int n = 0;
        for (Part part : parts) {
            n++;
            System.out.printf(Locale.ROOT, "[%d/%d] %s (%s, %s)%n", n, parts.size() + 1, part.title(), mode,
                    full ? part.fullTime() : part.quickTime());
            Files.deleteIfExists(out.resolve(part.csv()));
            List<String> cmd = new ArrayList<>(List.of(javaBin(), "-Xmx3g", "-Djava.awt.headless=true"));
            switch (part.name()) {
                case "engine" -> cmd.addAll(List.of("-jar", benchJar.toString()));
                case "ycsb" -> cmd.addAll(List.of("-cp", benchJar.toString(), "io.lethe.bench.DeleteHeavyYcsb"));
                case "secondary" -> {
                    String frocks = frocksdbJar(jobsCp);
                    if (frocks != null) {
                        cmd.add("-Dlethe.bench.frocksdbjni=" + frocks);
                    }
                    cmd.addAll(List.of("-cp", benchJar.toString(), "io.lethe.bench.SecondaryDeleteBench"));
                }
                case "jobs" -> cmd.addAll(List.of("-cp", jobsCp, "io.lethe.bench.jobs.ExpiryJobBench"));
                case "largestate" -> cmd.addAll(List.of("-cp", jobsCp, "io.lethe.bench.jobs.LargeStateBench"));
                case "nexmark" -> cmd.addAll(List.of("-cp", jobsCp, "io.lethe.bench.jobs.NexmarkBench"));
                case "nexmark-async" -> cmd.addAll(List.of("-Dlethe.bench.nexmark.async=true", "-cp", jobsCp,
                        "io.lethe.bench.jobs.NexmarkBench"));
                case "streams" -> cmd.addAll(List.of("-cp", streamsCp, "io.lethe.bench.streams.StreamsBench"));
                default -> throw new IllegalStateException("no main class for part " + part.name());
            }
            cmd.addAll(List.of(mode, out.toString()));
            long start = System.nanoTime();
            int exit = runChild(cmd, out.resolve(part.name() + ".log"));
            long rows = dataRows(out.resolve(part.csv()));
            double seconds = (System.nanoTime() - start) / 1e9;
            if (exit != 0 || rows == 0) {
                failed.add(part.name());
                System.out.printf(Locale.ROOT, "[%d/%d] %s FAILED after %.0f s: exit code %d, %d result rows (log: %s)%n",
                        n, parts.size() + 1, part.name(), seconds, exit, rows, out.resolve(part.name() + ".log"));
            } else {
                System.out.printf(Locale.ROOT, "[%d/%d] %s done in %.0f s: %d result rows in %s%n", n,
                        parts.size() + 1, part.name(), seconds, rows, out.resolve(part.csv()));
            }
        }
        System.out.printf("[%d/%d] report%n", parts.size() + 1, parts.size() + 1);
        Report.write(out, report);
        System.out.printf(Locale.ROOT, "Report: %s (charts and CSV files in %s); suite took %.1f min%n", report, out,
                (System.nanoTime() - suiteStart) / 60e9);
        return failed;
    }

    /** Runs a child JVM, echoing its output indented and keeping all of it in {@code log}. */
    static int runChild(List<String> cmd, Path log) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        try (BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
                PrintWriter w = new PrintWriter(Files.newBufferedWriter(log))) {
            w.println(String.join(" ", cmd));
            for (String line; (line = in.readLine()) != null; ) {
                w.println(line);
                System.out.println("    " + line);
            }
        }
        return p.waitFor();
    }

    /** Lines after the header, 0 when the file is missing. */
    static long dataRows(Path csv) throws IOException {
        if (!Files.isRegularFile(csv)) {
            return 0;
        }
        try (Stream<String> lines = Files.lines(csv)) {
            return Math.max(0, lines.filter(l -> !l.isBlank()).count() - 1);
        }
    }

    static String javaBin() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    /** Flink's RocksDB fork from the job benchmarks' class path (the secondary-delete bench's filter run). */
    static String frocksdbJar(String classpath) {
        for (String entry : classpath.split(":")) {
            if (entry.contains("frocksdbjni")) {
                return entry;
            }
        }
        return null;
    }

    /** {@code environment.csv}: the machine, the versions and how the run was started. */
    void writeEnvironment(String arguments, String jobsCp) throws IOException {
        Map<String, String> env = new LinkedHashMap<>();
        env.put("command", "benchmarks/run.sh " + arguments);
        env.put("mode", full ? "full" : "quick");
        env.put("date", ZonedDateTime.now(ZoneOffset.UTC).format(DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm 'UTC'")));
        env.put("cpu", firstValue(Path.of("/proc/cpuinfo"), "model name") + ", "
                + Runtime.getRuntime().availableProcessors() + " cores available");
        env.put("memory", firstValue(Path.of("/proc/meminfo"), "MemTotal"));
        env.put("os", firstValue(Path.of("/etc/os-release"), "PRETTY_NAME").replace("\"", "") + ", Linux "
                + System.getProperty("os.version") + " " + System.getProperty("os.arch"));
        env.put("java", System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"));
        env.put("lethe commit", command("git", "-C", root.toString(), "describe", "--always", "--dirty"));
        env.put("native compiler", command("c++", "--version").lines().findFirst().orElse("unknown"));
        Properties versions = new Properties();
        try (var in = Suite.class.getResourceAsStream("/versions.properties")) {
            if (in != null) {
                versions.load(in);
            }
        }
        env.put("flink", versions.getProperty("flink", "unknown"));
        env.put("rocksdbjni", versions.getProperty("rocksdbjni", "unknown") + " (engine benchmarks)");
        String frocks = frocksdbJar(jobsCp);
        env.put("frocksdbjni", frocks == null ? "unknown"
                : Path.of(frocks).getFileName().toString().replace("frocksdbjni-", "").replace(".jar", "")
                        + " (Flink's RocksDB backend)");
        env.put("jmh", versions.getProperty("jmh", "unknown"));
        try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(out.resolve("environment.csv")))) {
            w.println("key,value");
            env.forEach((k, v) -> w.println(k + "," + v));
        }
    }

    static String firstValue(Path file, String key) {
        try (Stream<String> lines = Files.lines(file)) {
            return lines.filter(l -> l.startsWith(key)).map(l -> l.substring(l.indexOf(l.contains(":") ? ':' : '=')
                    + 1).trim()).findFirst().orElse("unknown");
        } catch (IOException | RuntimeException e) {
            return "unknown";
        }
    }

    static String command(String... cmd) {
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            String s = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            return p.waitFor() == 0 && !s.isEmpty() ? s : "unknown";
        } catch (IOException e) {
            return "unknown";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "unknown";
        }
    }
}
