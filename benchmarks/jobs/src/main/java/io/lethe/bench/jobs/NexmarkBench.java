package io.lethe.bench.jobs;

import org.HdrHistogram.Histogram;
import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.PipelineOptions;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.WebOptions;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The state-heavy Nexmark queries (q4, q5, q7, q8, q9, q11, q16, q18, q19, q20; {@link NexmarkQueries}) in
 * Flink SQL on Lethe and Flink's RocksDB (timers in RocksDB and on the heap), ForSt and HashMap backends
 * ({@link JobBackends}), one run after another in this JVM on a MiniCluster with parallelism 1, rounds
 * interleaved and the backends' order rotated each round, every backend with the same managed memory
 * and checkpoints. The input is the same bounded stream of generated events in every run ({@link
 * NexmarkGenerator}).
 *
 * <p>Per run: events per second in steady state (10 % to 90 % of the input, {@link SteadyProbe}) and
 * over the whole job, the local state directory's largest size (sampled every 250 ms), the largest and
 * the final checkpoint's full size (Flink's checkpoint statistics), and the fingerprint of the query's
 * final result ({@link NexmarkMultiset}). Every backend's result must equal the HashMap backend's in the
 * same round, for the queries whose result is deterministic ({@link NexmarkEquality}); the program
 * prints the differences and exits with status 1 after writing its files if one is not.
 *
 * <p>Usage: {@code NexmarkBench [quick|full] [output directory]}: writes {@code nexmark.csv} and {@code
 * nexmark.settings.csv}. Quick (about 2 minutes): 50 k events per run, one round, and each query once
 * more on the HashMap backend to see that its result repeats. Full (about an hour): 2 M events per run,
 * two rounds (the HashMap backend's two runs show whether a result repeats). System properties: {@code
 * lethe.bench.nexmark.events}, {@code .rate} (event time, default 10,000 events/s), {@code .queries} and
 * {@code .backends} (comma-separated subsets), {@code .rounds}, {@code .mini-batch} (default true), {@code
 * lethe.bench.checkpoint-seconds} (default 2 quick, 10 full), {@code lethe.bench.nexmark.container} (a memory
 * limit per run, each in a JVM of its own: {@link NexmarkContainer}). Modes: {@link NexmarkMode}.
 *
 * <p>The asynchronous part ({@code -Dlethe.bench.nexmark.async=true}): Lethe and ForSt with asynchronous
 * state, each on its own executor, and Lethe through Flink's synchronous adaptor (lethe-adaptor, its
 * default), against RocksDB with synchronous state, all with the plan asynchronous
 * state needs (no mini-batches, one-phase aggregation); RocksDB's result is the reference (the other part
 * checks it against the HashMap backend's, whose heap would not hold this state). Writes {@code
 * nexmark-async.csv} and {@code nexmark-async.settings.csv}. Quick: q4, q18 and q20, 50 k events. Full:
 * the queries whose state grows with the input (q4, q9, q18, q20), 3 M events, one round (ForSt's
 * executor takes about 25 minutes of it), each run in a JVM of its own in a memory cgroup of 2 GiB with a
 * heap of 640 MiB, so that the state outgrows what the limit leaves the page cache. Then the latency runs
 * ({@link NexmarkMode#paced()}, {@link NexmarkLatency}).
 */
public final class NexmarkBench {
    private static final long WARM_UP_EVENTS = 20_000;

    private NexmarkBench() {}

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals(NexmarkContainer.CHILD)) {
            runHere(args);
            System.exit(0);
        }
        boolean full = args.length > 0 && args[0].equals("full");
        if (full && Boolean.getBoolean(NexmarkMode.ASYNC_PROPERTY)) {
            NexmarkContainer.defaults("2g", "640m");
        }
        NexmarkMode mode = NexmarkMode.of(full);
        Path out = Path.of(args.length > 1 ? args[1] : "target/nexmark").toAbsolutePath();
        Files.createDirectories(out);
        System.out.printf(Locale.ROOT, "Nexmark benchmark (%s): %d queries x %d backends x %d round(s), %,d events"
                        + " per run at %,d events/s of event time, parallelism 1, checkpoints every %d s, SQL %s,"
                        + " output %s%n", mode.name(), mode.queries().size(), mode.backends().size(), mode.rounds(),
                mode.events(), mode.config().eventsPerSecond(), mode.checkpointSeconds(),
                NexmarkJob.sqlOptions(mode.asyncState(), mode.asyncState()), out);
        long start = System.nanoTime();
        Path work = out.resolve("work");
        if (!NexmarkContainer.wanted()) {
            warmUp(mode, mode.reference(), work);
        }
        Measured unpaced = measureAll(mode, work, start, Map.of());
        NexmarkMode pacedMode = mode.paced();
        // A query seen to vary between the reference's runs varies on the paced input too (which has no repeat).
        Measured paced = pacedMode == null ? null : measureAll(pacedMode, work, start,
                unpaced.outcome().nondeterministic());
        ExpiryJobBench.deleteTree(work);
        NexmarkResults.write(unpaced, paced, out);
        double seconds = (System.nanoTime() - start) / 1e9;
        NexmarkResults.summarize(unpaced, paced, seconds);
        if (!unpaced.outcome().bugs().isEmpty() || (paced != null && !paced.outcome().bugs().isEmpty())) {
            System.exit(1);
        }
    }

    /**
     * The runs of one mode, judged against its reference.
     *
     * @param determinism how it was decided which queries are deterministic on the mode's input
     */
    record Measured(NexmarkMode mode, List<NexmarkRun> runs, List<NexmarkRun> repeats,
            NexmarkEquality.Outcome outcome, String determinism) {}

    /**
     * Runs every query of {@code mode} on every backend, round by round, with progress.
     *
     * @param varying per query, why its result was seen to vary in an earlier part (null: it did not)
     */
    static Measured measureAll(NexmarkMode mode, Path work, long start, Map<String, String> varying) {
        Map<String, String> reasoned = new HashMap<>();
        String determinism = NexmarkEquality.reason(mode.queries(), new NexmarkGenerator(mode.config()),
                mode.events(), reasoned, mode.reference());
        varying.forEach((query, why) -> {
            if (why != null && reasoned.containsKey(query)) {
                reasoned.merge(query, "seen in the unpaced runs: " + why, (a, b) -> a + "; " + b);
            }
        });
        System.out.println((mode.pacedRate() > 0 ? String.format(Locale.ROOT, "Paced runs (latency): %,d events at"
                + " %,d events/s. ", mode.events(), mode.pacedRate()) : "") + "Determinism: " + determinism);
        List<NexmarkRun> runs = new ArrayList<>();
        List<NexmarkRun> repeats = new ArrayList<>();
        for (NexmarkQueries.Query query : mode.queries()) {
            for (int round = 1; round <= mode.rounds(); round++) {
                List<String> backends = mode.backends();
                for (int i = 0; i < backends.size(); i++) {
                    String backend = backends.get((i + round - 1) % backends.size());
                    runs.add(report(run(query, backend, round, mode, work), "", mode, start, runs, repeats));
                }
                if (mode.repeatsReference()) {
                    repeats.add(report(run(query, mode.reference(), round, mode, work), " (repeat)", mode,
                            start, runs, repeats));
                }
            }
        }
        return new Measured(mode, runs, repeats, NexmarkEquality.judge(runs, repeats, reasoned, mode.reference()),
                determinism);
    }

    /**
     * In a run's own JVM ({@link NexmarkContainer}): {@code run <mode> <query> <backend> <round> <paced rate>
     * <work directory> <result file>}, after a warm-up on the same backend.
     */
    private static void runHere(String[] args) throws IOException {
        NexmarkMode mode = NexmarkMode.of(args[1].equals("full"));
        if (Long.parseLong(args[5]) > 0) {
            mode = mode.paced();
        }
        NexmarkQueries.Query query = NexmarkQueries.byName(args[2]);
        Path work = Path.of(args[6]);
        warmUp(mode, args[3], work);
        NexmarkContainer.report(runInThisJvm(query, args[3], Integer.parseInt(args[4]), mode, work), Path.of(args[7]));
    }

    /**
     * One short run, not recorded, so that the first measured run does not pay for loading the planner
     * and compiling Flink's hot paths alone.
     */
    private static void warmUp(NexmarkMode mode, String backend, Path work) {
        long events = Math.min(mode.events(), WARM_UP_EVENTS);
        NexmarkQueries.Query query = mode.queries().get(0);
        NexmarkRun r = runInThisJvm(query, backend, 0, new NexmarkMode(mode.name(), events, 1,
                mode.checkpointSeconds(), mode.config(), mode.backends(), mode.queries(), mode.asyncState()), work);
        System.out.printf(Locale.ROOT, "  warm-up: %s on %s, %,d events, not recorded (%s)%n", query.name(),
                backend, events, r.error() == null ? String.format(Locale.ROOT, "%.1f s",
                        r.seconds()) : "failed: " + r.error());
    }

    private static NexmarkRun report(NexmarkRun r, String what, NexmarkMode mode, long start, List<NexmarkRun> runs,
            List<NexmarkRun> repeats) {
        int done = runs.size() + repeats.size() + 1;
        double elapsed = (System.nanoTime() - start) / 1e9;
        String progress = String.format(Locale.ROOT, "[%d/%d, %.0f s, about %.0f s left]", done, mode.runs(),
                elapsed, elapsed / done * (mode.runs() - done));
        if (r.error() != null) {
            System.out.printf("  %-4s %-19s round %d%s: FAILED: %s %s%n", r.query(), r.backend(), r.round(), what,
                    r.error(), progress);
            return r;
        }
        System.out.printf(Locale.ROOT, "  %-4s %-19s round %d%s: %,9.0f events/s steady (%,.0f whole job, %.1f s),"
                        + " local max %s, %d checkpoints up to %s, result %,d rows from %,d changes, sha256 %.12s%s%s"
                        + " %s%n",
                r.query(), r.backend(), r.round(), what, r.steadyEventsPerSecond(), r.eventsPerSecond(), r.seconds(),
                ExpiryJobBench.mib(r.maxLocal()), r.checkpoints().size(), ExpiryJobBench.mib(r.maxCheckpoint()),
                r.result().rows(), r.changes(), r.result().sha256(), Double.isNaN(r.requestsPerBatch()) ? ""
                        : String.format(Locale.ROOT, ", %.1f requests per executor batch", r.requestsPerBatch()),
                r.pacedRate() == 0 ? "" : String.format(Locale.ROOT, ", paced at %,d events/s: latency p50 %.1f ms"
                        + " p99 %.1f ms", r.pacedRate(), r.latencyP50Micros() / 1e3, r.latencyP99Micros() / 1e3),
                progress);
        System.out.println("    checkpoints (full size, MiB): " + r.checkpoints().stream()
                .map(c -> ExpiryJobBench.mib(c.fullBytes())).toList());
        return r;
    }

    /**
     * Runs one query on one backend, in a JVM of its own where runs have a memory limit ({@link
     * NexmarkContainer}); a failure becomes a failed run, reported, not thrown.
     */
    static NexmarkRun run(NexmarkQueries.Query query, String backend, int round, NexmarkMode mode, Path work) {
        if (!NexmarkContainer.wanted()) {
            return runInThisJvm(query, backend, round, mode, work);
        }
        try {
            return NexmarkContainer.run(query, backend, round, mode, work);
        } catch (IOException | InterruptedException e) {
            throw new IllegalStateException("could not run " + query.name() + " on " + backend + " in a JVM of its"
                    + " own", e);
        }
    }

    private static NexmarkRun runInThisJvm(NexmarkQueries.Query query, String backend, int round, NexmarkMode mode,
            Path work) {
        try {
            return measure(query, backend, round, mode, work);
        } catch (Exception e) {
            e.printStackTrace(System.out);
            Throwable root = e;
            while (root.getCause() != null) {
                root = root.getCause();
            }
            String why = (root.getClass().getSimpleName() + " " + root.getMessage()).replaceAll("[,\\r\\n]+", ";");
            return NexmarkRun.failed(query.name(), backend, round, mode.events(), mode.pacedRate(), why);
        }
    }

    private static NexmarkRun measure(NexmarkQueries.Query query, String backend, int round, NexmarkMode mode,
            Path work) throws Exception {
        Path dir = work.resolve(query.name() + "-" + backend + "-" + round + (mode.pacedRate() > 0 ? "-paced" : ""));
        ExpiryJobBench.deleteTree(dir);
        Path local = Files.createDirectories(dir.resolve("local"));
        Configuration conf = configuration(backend, local, Files.createDirectories(dir.resolve("checkpoints")),
                mode.checkpointSeconds(), "nexmark-" + query.name() + "-" + backend, mode.asyncStateOn(backend));
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(1, conf);
        NexmarkJob.build(env, query, new NexmarkGenerator(mode.config()), mode.events(), mode.asyncState(),
                mode.asyncStateOn(backend), mode.pacedRate() > 0);
        List<long[]> samples = new ArrayList<>();
        try (MiniCluster mini = MiniClusters.oneSlot(conf)) {
            mini.start();
            long startMillis = System.currentTimeMillis();
            MiniClusters.Finished finished;
            double requestsPerBatch;
            try (BackendGauges.Watch executor = new BackendGauges.Watch()) {
                finished = MiniClusters.runSampled(mini, env.getStreamGraph(), query.name() + "/" + backend, local,
                        samples);
                requestsPerBatch = executor.requestsPerBatch();
            }
            JobExecutionResult result = finished.result();
            List<JobRun.Checkpoint> checkpoints =
                    ExpiryJobBench.checkpoints(mini.getArchivedExecutionGraph(finished.id()).get(), startMillis);
            ExpiryJobBench.deleteTree(dir);
            Histogram latency = result.getAccumulatorResult(NexmarkResultSink.LATENCY);
            boolean measured = latency != null && latency.getTotalCount() > 0;
            return new NexmarkRun(query.name(), backend, round, mode.events(), result.getNetRuntime() / 1000.0,
                    SteadyProbe.steadyNanos(result), samples, checkpoints, fingerprint(result),
                    result.<Long>getAccumulatorResult(NexmarkResultSink.CHANGES), requestsPerBatch, null,
                    mode.pacedRate(), measured ? latency.getValueAtPercentile(50) : Double.NaN,
                    measured ? latency.getValueAtPercentile(99) : Double.NaN);
        }
    }

    /** As {@code ExpiryJobBench}'s unpaced runs, and no restarts: the result sink keeps no state. */
    static Configuration configuration(String backend, Path local, Path checkpoints, long checkpointSeconds,
            String name, boolean asyncState) {
        Configuration conf = new Configuration();
        JobBackends.configure(backend, conf, local);
        if (asyncState) {
            JobBackends.asyncExecutor(backend, conf);
        }
        BackendGauges.configure(conf);
        conf.set(CheckpointingOptions.INCREMENTAL_CHECKPOINTS, JobBackends.onDisk(backend));
        conf.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, checkpoints.toUri().toString());
        conf.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, Duration.ofSeconds(checkpointSeconds));
        conf.setString("taskmanager.memory.managed.size", ExpiryJobBench.MANAGED_MEMORY);
        conf.set(RestOptions.BIND_PORT, "0");
        conf.set(WebOptions.CHECKPOINTS_HISTORY_SIZE, 100_000);
        conf.set(RestartStrategyOptions.RESTART_STRATEGY, "none");
        conf.set(PipelineOptions.NAME, name);
        return conf;
    }

    private static NexmarkMultiset.Fingerprint fingerprint(JobExecutionResult result) {
        List<String> reported = result.getAccumulatorResult(NexmarkResultSink.FINGERPRINT);
        if (reported == null || reported.size() != 1) {
            throw new IllegalStateException("the result sink reported " + reported + ", not one fingerprint");
        }
        return NexmarkMultiset.Fingerprint.parse(reported.get(0));
    }
}
