package io.lethe.bench.jobs;

import org.HdrHistogram.Histogram;
import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExecutionOptions;
import org.apache.flink.configuration.PipelineOptions;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.WebOptions;
import org.apache.flink.runtime.executiongraph.ArchivedExecutionGraph;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.windowing.assigners.SlidingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.FileVisitResult;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Window and TTL jobs on Lethe and Flink's RocksDB (timers in RocksDB and on the heap), ForSt and
 * HashMap backends ({@link JobBackends}), one after another in this JVM, rounds interleaved (the
 * backends' order rotated each round), every backend with the same managed memory. Per run: records
 * per second in steady state (10 % to 90 % of the input), CPU time per record, result latency (paced
 * runs), bytes the process wrote to disk per record (/proc/self/io, state and checkpoints together),
 * local state size over time, and every completed checkpoint's sizes and durations from Flink's
 * checkpoint statistics.
 *
 * <ul>
 *   <li><b>tumbling</b>: 20,000 keys, event time advancing 1 ms per 20 records, tumbling 10 s windows
 *       holding every element (a list per key and window: ~10 elements), counted when they fire; as fast
 *       as the job goes (the work does not depend on speed: windows follow event time).
 *   <li><b>sliding</b>: the same with 10 s windows sliding by 5 s (every element in two windows).
 *   <li><b>tumbling-paced</b>: tumbling at a fixed rate every backend sustains: latency from a window's
 *       newest element's due time to its result (p50, p99).
 *   <li><b>timers</b>: a million keys (quick: 100,000), one event each, all in one tumbling window per
 *       key, so a timer per key is pending until the input ends; then one watermark step fires them
 *       all, each reading and clearing its window. Measures that step (first window fired to last).
 *   <li><b>ttl</b>: de-duplication at a fixed rate; every key seen about four times, a value state per key
 *       with a 5 s processing-time TTL (Flink's default cleanup: RocksDB's and ForSt's compaction filter,
 *       Lethe's horizon, the HashMap backend's incremental cleanup). Paced, so which repeats find their
 *       key alive depends on the schedule, not on the backend's speed; latency per record.
 * </ul>
 *
 * Usage: {@code ExpiryJobBench [quick|full] [output directory]}: writes {@code jobs.csv}, {@code
 * jobs-state-size.csv}, {@code jobs-checkpoints.csv} and {@code jobs.settings.csv}. Quick: 300 k records
 * per unpaced run, 3 s paced runs, 100,000 timers, one round, without lethe-h8. Full: 6 M records, 60 s paced
 * runs, a million timers, two rounds, after a warm-up run of a million records on every backend. {@code
 * -Dlethe.bench.jobs.only=timers,ttl} and {@code -Dlethe.bench.jobs.backends=lethe,rocksdb} run a part.
 */
public final class ExpiryJobBench {
    static final Duration WINDOW = Duration.ofSeconds(10);
    static final Duration SLIDE = Duration.ofSeconds(5);
    static final List<String> JOBS = List.of("tumbling", "sliding", "tumbling-paced", "ttl", "timers");
    static final String MANAGED_MEMORY = "256m";
    /** Records of each backend's warm-up run in full mode (quick runs are not compared: none there). */
    static final long WARM_UP_RECORDS = 1_000_000;
    static final Duration PACED_BUFFER_TIMEOUT = Duration.ofMillis(5);
    static final Duration PACED_WATERMARK_INTERVAL = Duration.ofMillis(20);
    /**
     * Checkpoints flush every backend's memtables: how much state reaches disk depends on it. 10 s in
     * full runs, 2 s in quick ones (runs of a few seconds), -Dlethe.bench.checkpoint-seconds to change.
     */
    static Duration checkpointInterval = Duration.ofSeconds(10);

    private ExpiryJobBench() {}

    /**
     * The sizes of a mode: records per unpaced run, the paced rate and how long a paced run lasts, the
     * timers job's keys (one record and one pending timer each), and the records of the warm-up run each
     * backend makes before the first recorded one (0: none).
     */
    record Sizes(long records, long rate, long pacedSeconds, long timers, int rounds, List<String> backends,
            long warmUpRecords) {
        long records(String job) {
            return job.equals("timers") ? timers : paced(job) ? rate * pacedSeconds : records;
        }

        long rate(String job) {
            return paced(job) ? rate : 0;
        }

        static boolean paced(String job) {
            return job.equals("tumbling-paced") || job.equals("ttl");
        }
    }

    public static void main(String[] args) throws Exception {
        boolean full = args.length > 0 && args[0].equals("full");
        Path out = Path.of(args.length > 1 ? args[1] : "target/jobs").toAbsolutePath();
        Files.createDirectories(out);
        Sizes sizes = new Sizes(full ? 6_000_000 : 300_000, Long.getLong("lethe.bench.jobs.rate", 50_000),
                full ? 60 : 3, full ? 1_000_000 : 100_000, full ? 2 : 1, SuiteParts.selected("lethe.bench.jobs.backends",
                full ? JobBackends.ALL : JobBackends.ALL.stream().filter(b -> !b.equals("lethe-h8")).toList()),
                full ? WARM_UP_RECORDS : 0);
        checkpointInterval = Duration.ofSeconds(Long.getLong("lethe.bench.checkpoint-seconds", full ? 10 : 2));
        System.out.printf(Locale.ROOT, "Job benchmark (%s): %,d records per unpaced run, paced runs %,d records/s for"
                + " %d s, %d round(s), parallelism 1, checkpoints every %d s, output %s%n", full ? "full" : "quick",
                sizes.records(), sizes.rate(), sizes.pacedSeconds(), sizes.rounds(), checkpointInterval.toSeconds(),
                out);
        warmUp(sizes, out.resolve("work"));
        List<JobRun> runs = new ArrayList<>();
        for (String job : SuiteParts.selected("lethe.bench.jobs.only", JOBS)) {
            for (int round = 1; round <= sizes.rounds(); round++) {
                List<String> backends = sizes.backends();
                for (int i = 0; i < backends.size(); i++) {
                    String backend = backends.get((i + round - 1) % backends.size());
                    JobRun r = run(job, backend, round, sizes, out.resolve("work"));
                    runs.add(r);
                    print(r);
                }
            }
        }
        deleteTree(out.resolve("work"));
        JobResults.write(runs, out, sizes);
    }

    /**
     * Runs the tumbling job once on every backend, not recorded. The first run in a JVM pays for
     * loading and compiling Flink's code and its backend's: in a full run without a warm-up, the first
     * run (tumbling on Lethe) took 6.3 µs of CPU per record, and the same job on Lethe as the last run
     * of the next round 3.6, while every other backend needed more CPU per record in that round.
     */
    private static void warmUp(Sizes sizes, Path work) throws Exception {
        if (sizes.warmUpRecords() == 0) {
            return;
        }
        Sizes warm = new Sizes(sizes.warmUpRecords(), sizes.rate(), sizes.pacedSeconds(), sizes.timers(), 1,
                sizes.backends(), 0);
        for (String backend : sizes.backends()) {
            JobRun r = run("tumbling", backend, 0, warm, work);
            System.out.printf(Locale.ROOT, "  warm-up: tumbling on %s, %,d records, not recorded (%,.0f records/s,"
                    + " %.1f µs CPU/record)%n", backend, r.records(), r.steadyRecordsPerSecond(), r.cpuMicrosPerRecord());
        }
    }

    private static void print(JobRun r) {
        System.out.printf(Locale.ROOT, "  %-14s %-19s round %d: %,10.0f records/s steady (%,.0f whole job), %.1f µs"
                        + " CPU/record, latency p50 %.1f ms p99 %.1f ms, %6.1f bytes written/record, local max %s,"
                        + " %d checkpoints up to %s, final %s%s%n", r.job(), r.backend(), r.round(),
                r.steadyRecordsPerSecond(), r.recordsPerSecond(), r.cpuMicrosPerRecord(),
                r.latencyMicros(50) / 1000, r.latencyMicros(99) / 1000, r.bytesPerRecord(), mib(r.maxLocal()),
                r.duringRun().size(), mib(r.maxCheckpoint()), mib(r.finalCheckpoint()),
                r.job().equals("timers") ? String.format(Locale.ROOT, ", watermark step %.0f ms", r.fireMillis()) : "");
    }

    private static Configuration configuration(String backend, Path local, Path checkpoints, boolean paced) {
        Configuration conf = new Configuration();
        if (paced) {
            // Latency runs: network buffers flushed and watermarks emitted often, for every backend alike,
            // so what a backend adds is not hidden under Flink's defaults (100 ms and 200 ms).
            conf.set(ExecutionOptions.BUFFER_TIMEOUT, PACED_BUFFER_TIMEOUT);
            conf.set(PipelineOptions.AUTO_WATERMARK_INTERVAL, PACED_WATERMARK_INTERVAL);
        }
        JobBackends.configure(backend, conf, local);
        conf.set(CheckpointingOptions.INCREMENTAL_CHECKPOINTS, JobBackends.onDisk(backend));
        conf.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, checkpoints.toUri().toString());
        conf.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, checkpointInterval);
        conf.setString("taskmanager.memory.managed.size", MANAGED_MEMORY);
        conf.set(RestOptions.BIND_PORT, "0");
        // Statistics of every checkpoint of the run, not only the last 10.
        conf.set(WebOptions.CHECKPOINTS_HISTORY_SIZE, 100_000);
        return conf;
    }

    private static void build(StreamExecutionEnvironment env, String job, long records, long rate) {
        switch (job) {
            case "tumbling", "tumbling-paced" ->
                    Jobs.windowJob(env, records, rate, TumblingEventTimeWindows.of(WINDOW));
            case "sliding" -> Jobs.windowJob(env, records, rate, SlidingEventTimeWindows.of(WINDOW, SLIDE));
            case "ttl" -> Jobs.ttlJob(env, records, rate);
            case "timers" -> Jobs.timersJob(env, records);
            default -> throw new IllegalArgumentException(job);
        }
    }

    private static JobRun run(String job, String backend, int round, Sizes sizes, Path work) throws Exception {
        Path dir = work.resolve(job + "-" + backend + "-" + round);
        deleteTree(dir);
        Path local = Files.createDirectories(dir.resolve("local"));
        Configuration conf = configuration(backend, local, Files.createDirectories(dir.resolve("checkpoints")),
                Sizes.paced(job));
        long records = sizes.records(job);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(1, conf);
        build(env, job, records, sizes.rate(job));
        List<long[]> samples = new ArrayList<>();
        try (MiniCluster mini = MiniClusters.oneSlot(conf)) {
            mini.start();
            long startMillis = System.currentTimeMillis();
            long writtenBefore = bytesWritten();
            long cpuBefore = ProcessCpu.nanos();
            MiniClusters.Finished finished =
                    MiniClusters.runSampled(mini, env.getStreamGraph(), job + "/" + backend, local, samples);
            JobExecutionResult result = finished.result();
            long written = bytesWritten() - writtenBefore;
            long cpu = ProcessCpu.nanos() - cpuBefore;
            Histogram latency = sizes.rate(job) > 0 ? result.getAccumulatorResult(Jobs.LATENCY) : null;
            List<JobRun.Checkpoint> completed = checkpoints(mini.getArchivedExecutionGraph(finished.id()).get(), startMillis);
            deleteTree(dir);
            return new JobRun(job, backend, round, records, sizes.rate(job), result.getNetRuntime() / 1000.0,
                    SteadyProbe.steadyNanos(result), cpu, written, latency, samples, completed,
                    Jobs.fireMillis(result));
        }
    }

    /** The completed checkpoints of a finished job, by id, with sizes and their slowest task's durations. */
    static List<JobRun.Checkpoint> checkpoints(ArchivedExecutionGraph graph, long startMillis) {
        return CheckpointHistory.completed(graph).stream().map(c -> new JobRun.Checkpoint(c.id(),
                c.ackMillis() - startMillis, c.fullBytes(), c.checkpointedBytes(), c.metadataBytes(), c.syncMillis(),
                c.asyncMillis(), c.durationMillis())).toList();
    }

    /** Samples the local directory's disk usage ({@link DiskUsage}) every 250 ms until {@code done}, printing it every 5 s. */
    static void sample(String what, Path local, long start, AtomicBoolean done, List<long[]> samples) {
        long nextPrint = 5_000;
        while (!done.get()) {
            long t = (System.nanoTime() - start) / 1_000_000;
            long[] s = {t, DiskUsage.of(local)};
            synchronized (samples) {
                samples.add(s);
            }
            if (t >= nextPrint) {
                System.out.printf("    %s: %d s, local %s%n", what, t / 1000, mib(s[1]));
                nextPrint += 5_000;
            }
            try {
                Thread.sleep(250);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    // ---- Measuring.

    /** Bytes this process caused to be written to storage, minus those cancelled by truncation. */
    static long bytesWritten() {
        try {
            long write = 0;
            long cancelled = 0;
            for (String line : Files.readAllLines(Path.of("/proc/self/io"))) {
                if (line.startsWith("write_bytes:")) {
                    write = Long.parseLong(line.substring(12).trim());
                } else if (line.startsWith("cancelled_write_bytes:")) {
                    cancelled = Long.parseLong(line.substring(22).trim());
                }
            }
            return write - cancelled;
        } catch (IOException | NumberFormatException e) {
            return 0;
        }
    }

    /**
     * Deletes {@code dir} and everything in it. Files that vanish meanwhile are fine: a backend may
     * still be removing its subsumed checkpoint files as a job ends (ForSt does).
     */
    static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        Files.walkFileTree(dir, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                Files.deleteIfExists(file);
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFileFailed(Path file, IOException e) throws IOException {
                if (e instanceof NoSuchFileException) {
                    return FileVisitResult.CONTINUE;
                }
                throw e;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path d, IOException e) throws IOException {
                if (e != null && !(e instanceof NoSuchFileException)) {
                    throw e;
                }
                Files.deleteIfExists(d);
                return FileVisitResult.CONTINUE;
            }
        });
    }

    static String mib(long bytes) {
        return String.format(Locale.ROOT, "%.1f MiB", bytes / 1048576.0);
    }
}
