package io.lethe.bench.jobs;

import org.apache.flink.configuration.MemorySize;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * State far larger than memory: the {@link LargeStateJobs} on Lethe, Flink's RocksDB backend (timers
 * in RocksDB and, for the windowed job, on the heap) and ForSt, each run ({@link LargeStateRun}) in a
 * JVM of its own with the same heap and managed memory, one after another. The HashMap backend is
 * left out: it keeps state on the heap, so it is no choice for state twenty times the memory budget.
 *
 * <p>Usage: {@code LargeStateBench [quick|full] [output directory] [job/backend,...]}: runs every job
 * on every backend, or only the runs listed, in their order (to redo or complete some; the results of
 * the other runs already in the directory are kept), then writes {@code largestate.csv} (a row per
 * run), {@code largestate-timeline.csv} (every second of every run), {@code largestate-checkpoints.csv}
 * and {@code largestate.settings.csv}. Full: state of at least 20 times the managed memory, 10 minutes
 * measured in steady state and 2 minutes cold, one round (about half an hour per run); the system
 * property {@code lethe.bench.largestate.steady-seconds} sets another steady phase. Quick: small state
 * and seconds per phase, to show that every part runs.
 */
public final class LargeStateBench {
    static final String MANAGED_MEMORY = "256m";
    static final String HEAP = "3g";
    /**
     * Each run's memory limit, as its TaskManager container would have: the heap, the managed memory and
     * 768 MiB for the JVM's other memory (metaspace, threads, network buffers) and the page cache.
     */
    static final String CONTAINER = "4g";
    static final List<String> JOBS = List.of("keyed", "keyed-async", "windowed");
    /** Full mode's steady phase in seconds, where not the default (passed on to each run's JVM). */
    static final String STEADY_SECONDS_PROPERTY = "lethe.bench.largestate.steady-seconds";
    /** The code a run measures ({@code git describe --always --dirty}), passed on to each run's JVM. */
    static final String CODE_PROPERTY = "lethe.bench.largestate.code";
    private static final String[] FILES = {"", "-timeline", "-checkpoints"};

    private LargeStateBench() {}

    static long managedMemoryBytes() {
        return MemorySize.parse(MANAGED_MEMORY).getBytes();
    }

    static LargeStateJobs.Sizes sizes(boolean full) {
        return full
                ? new LargeStateJobs.Sizes(1L << 24, 1L << 17, 2_000_000, Long.getLong(STEADY_SECONDS_PROPERTY, 600),
                        120, 30)
                : new LargeStateJobs.Sizes(1L << 15, 1L << 8, 10_000, 4, 2, 2);
    }

    /**
     * The backends a job runs on: timers on the heap or in RocksDB only matter where there are timers, and
     * Lethe's two ways with asynchronous state (its executor, Flink's synchronous adaptor) only where the
     * job has asynchronous state.
     */
    static List<String> backends(String job) {
        return switch (job) {
            case "windowed" -> List.of("lethe", "rocksdb", "rocksdb-heap-timers", "forst");
            case "keyed-async" -> List.of("lethe", "lethe-adaptor", "rocksdb", "forst");
            default -> List.of("lethe", "rocksdb", "forst");
        };
    }

    public static void main(String[] args) throws Exception {
        boolean full = args.length > 0 && args[0].equals("full");
        Path out = Path.of(args.length > 1 ? args[1] : "target/largestate").toAbsolutePath();
        List<String> runs = runs(args.length > 2 ? List.of(args[2].split(",")) : List.of());
        Files.createDirectories(out);
        LargeStateJobs.Sizes sizes = sizes(full);
        System.out.printf(Locale.ROOT, "Large-state benchmark (%s): keyed %,d keys, windowed %,d keys and windows of"
                        + " %,d records; %d s steady and %d s cold per run; %s managed memory, %s heap; output %s%n",
                full ? "full, about half an hour per run" : "quick", sizes.keys(), sizes.windowKeys(), sizes.windowRecords(),
                sizes.steadySeconds(), sizes.coldSeconds(), MANAGED_MEMORY, HEAP, out);
        List<String> failed = new ArrayList<>();
        String limit = null;
        String code = codeVersion();
        for (String run : runs) {
            String job = run.substring(0, run.indexOf('/'));
            String backend = run.substring(run.indexOf('/') + 1);
            System.out.printf(Locale.ROOT, "%s on %s (logical state %s):%n", job, backend,
                    ExpiryJobBench.mib(sizes.logicalBytes(job)));
            Child child = runChild(job, backend, full, out, code);
            limit = child.limit();
            if (child.exit() != 0) {
                failed.add(run + " (exit code " + child.exit() + ")");
            }
        }
        for (String suffix : FILES) {
            gather(out, suffix);
        }
        writeSettings(out.resolve("largestate.settings.csv"), sizes, limit, failed);
        if (!failed.isEmpty()) {
            System.err.println("large-state runs failed: " + String.join(", ", failed));
            System.exit(1);
        }
    }

    /** The runs ({@code job/backend}) to do: those listed, in their order, or all of them. */
    static List<String> runs(List<String> listed) {
        List<String> all = new ArrayList<>();
        for (String job : JOBS) {
            backends(job).forEach(backend -> all.add(job + "/" + backend));
        }
        for (String run : listed) {
            if (!all.contains(run)) {
                throw new IllegalArgumentException("no large-state run " + run + "; the runs are " + all);
            }
        }
        return listed.isEmpty() ? all : listed;
    }

    /** A finished run's exit code, and the memory limit it ran under (what the settings say of it). */
    private record Child(int exit, String limit) {}

    /** Runs one job on one backend in a JVM of its own, in a memory cgroup where the machine allows one. */
    private static Child runChild(String job, String backend, boolean full, Path out, String code)
            throws IOException, InterruptedException {
        MemoryCgroup cgroup = null;
        String limit;
        try {
            cgroup = MemoryCgroup.create("lethe-bench-" + job + "-" + backend, MemorySize.parse(CONTAINER).getBytes());
            limit = String.format(Locale.ROOT, "%s per run (a memory cgroup: heap %s + managed memory %s + the rest"
                    + " for the JVM's other memory and the page cache); as in a TaskManager container the page cache"
                    + " cannot hold the state", CONTAINER, HEAP, MANAGED_MEMORY);
        } catch (IOException e) {
            limit = "none (" + e.getMessage() + "): the page cache may hold the state";
            System.out.println("  no memory limit: " + e.getMessage());
        }
        Map<String, String> properties = new TreeMap<>(Map.of(CODE_PROPERTY, code));
        for (String property : List.of(ExperimentSettings.PROPERTY + backend, STEADY_SECONDS_PROPERTY)) {
            String value = System.getProperty(property);
            if (value != null) {
                properties.put(property, value);
            }
        }
        ContainedJvm.Exit exit = ContainedJvm.run(cgroup, HEAP, properties, LargeStateRun.class,
                List.of(job, backend, full ? "full" : "quick", out.toString()));
        return new Child(exit.code(), limit);
    }

    /** The checkout's commit, with "-dirty" when it has changes ({@code git describe}); "unknown" outside one. */
    static String codeVersion() {
        try {
            Process p = new ProcessBuilder("git", "describe", "--always", "--dirty").redirectErrorStream(true).start();
            String s = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            return p.waitFor() == 0 && !s.isEmpty() ? s : "unknown";
        } catch (IOException e) {
            return "unknown";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "unknown";
        }
    }

    /**
     * Writes {@code largestate<suffix>.csv}: for each run in order, its {@code <job>-<backend><suffix>.csv}
     * from this invocation's runs, else its rows already in that file (from earlier invocations).
     */
    static void gather(Path out, String suffix) throws IOException {
        Path gathered = out.resolve("largestate" + suffix + ".csv");
        List<String> earlier = Files.exists(gathered) ? Files.readAllLines(gathered) : List.of();
        List<String> lines = new ArrayList<>();
        for (String run : runs(List.of())) {
            Path part = part(out, run, suffix);
            if (Files.exists(part) && !earlier.isEmpty()) {
                earlier = inColumnOrder(earlier, Files.readAllLines(part).get(0));
            }
        }
        String header = earlier.isEmpty() ? null : earlier.get(0);
        for (String run : runs(List.of())) {
            Path part = part(out, run, suffix);
            List<String> runLines;
            if (Files.exists(part)) {
                List<String> partLines = Files.readAllLines(part);
                if (header != null && !header.equals(partLines.get(0))) {
                    throw new IOException(part + " has columns " + partLines.get(0) + ", " + gathered + " " + header);
                }
                header = partLines.get(0);
                runLines = partLines.subList(1, partLines.size());
            } else {
                String prefix = run.replace('/', ',') + ",";
                runLines = earlier.stream().skip(1).filter(line -> line.startsWith(prefix)).toList();
            }
            lines.addAll(runLines);
        }
        if (header != null) {
            lines.add(0, header);
            Files.write(gathered, lines);
        }
    }

    /** Where one run ({@code job/backend}) writes its {@code <suffix>} CSV file. */
    private static Path part(Path out, String run, String suffix) {
        return out.resolve("largestate-parts").resolve(run.replace('/', '-') + suffix + ".csv");
    }

    /**
     * CSV lines (a header, then rows of plain comma-separated values) with the columns of {@code header}
     * in its order, when every column they hold is among them (as files written before a column moved or
     * was added are): a column they lack stays empty. Otherwise unchanged.
     */
    static List<String> inColumnOrder(List<String> lines, String header) {
        List<String> from = List.of(lines.get(0).split(",", -1));
        List<String> to = List.of(header.split(",", -1));
        if (from.equals(to) || !new HashSet<>(to).containsAll(from)) {
            return lines;
        }
        List<String> result = new ArrayList<>(List.of(header));
        for (String line : lines.subList(1, lines.size())) {
            String[] values = line.split(",", -1);
            List<String> moved = new ArrayList<>();
            for (String column : to) {
                int at = from.indexOf(column);
                moved.add(at < 0 ? "" : values[at]);
            }
            result.add(String.join(",", moved));
        }
        return result;
    }

    private static void writeSettings(Path file, LargeStateJobs.Sizes sizes, String limit, List<String> failed)
            throws IOException {
        try (PrintWriter csv = new PrintWriter(Files.newBufferedWriter(file))) {
            csv.println("key,value");
            csv.printf(Locale.ROOT, "what,one run per job and backend; each in a JVM of its own (heap %s) with a"
                    + " MiniCluster (parallelism 1; %s managed memory for every backend); one round%n", HEAP,
                    MANAGED_MEMORY);
            csv.printf(Locale.ROOT, "keyed,%,d keys; per key a %d-byte profile (value state) and two %d-byte counters"
                    + " (map state); load: every key written once in a scrambled order; then each record reads and"
                    + " rewrites the profile and one counter of a key chosen uniformly at random (logical state %s)%n",
                    sizes.keys(), LargeStateJobs.PROFILE_BYTES, LargeStateJobs.COUNTER_BYTES,
                    ExpiryJobBench.mib(sizes.logicalBytes("keyed")));
            csv.println("keyed-async,the keyed job with asynchronous state (State V2; enableAsyncState()): a record's"
                    + " two reads are issued together and its two writes once both are back; Lethe with its own"
                    + " executor (state.backend.lethe.async-state.executor: true) and, as lethe-adaptor, through"
                    + " Flink's synchronous adaptor (Lethe's default); ForSt with its own executor; RocksDB through"
                    + " Flink's synchronous adaptor (one request at a time); no canonical savepoint (Flink 2.2 refuses"
                    + " them for asynchronous state)");
            csv.printf(Locale.ROOT, "windowed,%,d keys; one record per event-time ms with a %d-byte payload; tumbling"
                    + " windows of %,d ms holding every element (list state) with an allowed lateness of %d windows:"
                    + " the state holds %d to %d windows (at least %s logical); fired once at the end and cleared at"
                    + " the cleanup time; timers per key and window%n", sizes.windowKeys(),
                    LargeStateJobs.PAYLOAD_BYTES, sizes.windowRecords(), LargeStateJobs.LATENESS_WINDOWS,
                    LargeStateJobs.LATENESS_WINDOWS, LargeStateJobs.LATENESS_WINDOWS + 1,
                    ExpiryJobBench.mib(sizes.logicalBytes("windowed")));
            csv.println("payloads,half fixed text and half random characters from 64 symbols: they compress");
            // Runs of several invocations share this file: each run's steady length is in its own row.
            csv.printf(Locale.ROOT, "phases,load until the state is full; a steady phase (measured; each run's length"
                    + " in the report's Runs line); canonical savepoint and a last checkpoint; cancel; page cache"
                    + " dropped; restore from the last incremental checkpoint and %d s cold (measured); page cache"
                    + " dropped; restore from the savepoint%n", sizes.coldSeconds());
            csv.println("records/s,records the source made per second; backpressure holds it to the job's pace");
            csv.println("latency,keyed: the time of one record's state accesses (reads and writes); keyed-async: from"
                    + " a record's first request to the completion of its last write (callbacks run in the task's"
                    + " mailbox; the time a batch waits is included; through RocksDB's synchronous adaptor a request"
                    + " completes at once; so that is the access time alone); windowed: from the"
                    + " moment a window could close (its first record past the end was made) to its result;"
                    + " HdrHistogram");
            csv.println("bytes written,what the process wrote to disk (/proc/self/io) in the steady phase per record;"
                    + " state and checkpoints together");
            csv.println("restore time,from submitting the restored job until its stateful operator opened with its"
                    + " state (after the OS page cache was dropped); includes scheduling (the same for every backend)");
            csv.println("memory,resident set size (VmRSS) of the run's JVM; native = RSS minus the JVM's committed heap,"
                    + " non-heap and buffers: the backend's native memory with allocator overhead and thread stacks"
                    + " (it undercounts by the committed heap not yet touched); native resident (timeline only) ="
                    + " the same with the heap's resident pages (/proc/self/smaps) in place of its committed size;"
                    + " engine (timeline only; Lethe alone) = what Lethe's memory budget holds (decoded pages,"
                    + " memtables, open tables' index and filters); container = what the run's cgroup holds; the"
                    + " page cache included");
            csv.printf("memory limit,%s%n", limit == null ? "none" : limit.replace(',', ';'));
            if (!failed.isEmpty()) {
                csv.printf("failed runs,%s%n", String.join("; ", failed));
            }
            csv.printf(Locale.ROOT, "checkpoints,every %d s; incremental; retained on cancellation%n",
                    sizes.checkpointSeconds());
            for (String[] b : JobBackends.SETTINGS) {
                if (JOBS.stream().anyMatch(job -> backends(job).contains(b[0]))) {
                    csv.printf("backend %s,%s%n", b[0], b[1]);
                }
            }
            csv.println("left out,the HashMap backend (it keeps state on the heap); rocksdb-heap-timers on the keyed"
                    + " job (it has no timers)");
        }
    }
}
