package io.lethe.bench.jobs;

import org.HdrHistogram.Histogram;
import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExternalizedCheckpointRetention;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.configuration.WebOptions;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * One large-state run: one job on one backend, in a JVM of its own (so its resident memory and the
 * page cache belong to it alone). Phases:
 *
 * <ol>
 *   <li><b>load</b>: until the state is full (every key loaded, or the windows filled);
 *   <li><b>steady</b>: the measured phase, checkpoints periodic;
 *   <li>a canonical savepoint (where the backend takes them) and a last checkpoint, then the job is
 *       cancelled (its checkpoints retained);
 *   <li><b>cold</b>: with the OS page cache dropped (where the machine allows it), the job restored from
 *       its last incremental checkpoint and run for a while, measured like the steady phase;
 *   <li>with the page cache dropped again, the job restored from the canonical savepoint, run until its
 *       records flow, and cancelled.
 * </ol>
 *
 * Usage: {@code LargeStateRun job backend quick|full output-directory}: writes {@code
 * <job>-<backend>.csv}, {@code -timeline.csv} and {@code -checkpoints.csv} under {@code
 * output-directory/largestate-parts}; {@link LargeStateBench} runs it and gathers the files.
 */
public final class LargeStateRun {
    private final String job;
    private final String backend;
    private final LargeStateJobs.Sizes sizes;
    private final Path dir;
    private final Timeline timeline;

    private LargeStateRun(String job, String backend, LargeStateJobs.Sizes sizes, Path dir, Timeline timeline) {
        this.job = job;
        this.backend = backend;
        this.sizes = sizes;
        this.dir = dir;
        this.timeline = timeline;
    }

    /**
     * What a measured phase saw; {@code flushWork}: Lethe's flushes and the checkpoints whose copy of the
     * memtables became a flush whose files they linked (zeros on other backends).
     */
    record Phase(double seconds, long records, long cpuNanos, long writtenBytes, Histogram latencyNanos, long lookups,
            long missing, long windowsFired, long asyncBatches, long asyncRequests, BackendGauges.FlushWork flushWork) {
        double recordsPerSecond() {
            return records / seconds;
        }
    }

    /** A stopped job's checkpoints and how long the canonical savepoint took. */
    record Stopped(List<CheckpointHistory.Entry> checkpoints, String savepoint, long savepointMillis) {}

    public static void main(String[] args) throws Exception {
        String job = args[0];
        String backend = args[1];
        boolean full = args[2].equals("full");
        Path parts = Files.createDirectories(Path.of(args[3]).resolve("largestate-parts"));
        Path dir = Path.of(args[3]).resolve("work").resolve(job + "-" + backend);
        ExpiryJobBench.deleteTree(dir);
        Path local = Files.createDirectories(dir.resolve("local"));
        LargeStateJobs.Sizes sizes = LargeStateBench.sizes(full);
        LargeStateResult result;
        String cgroupDir = System.getProperty(ContainedJvm.CGROUP_PROPERTY);
        MemoryCgroup cgroup = cgroupDir == null ? null : MemoryCgroup.at(Path.of(cgroupDir));
        try (Timeline timeline = new Timeline(job + "/" + backend, local, cgroup)) {
            result = new LargeStateRun(job, backend, sizes, dir, timeline).run(local, cgroup);
            result.write(parts.resolve(job + "-" + backend), timeline.samples());
        } finally {
            ExpiryJobBench.deleteTree(dir);
        }
        result.print();
    }

    private LargeStateResult run(Path local, MemoryCgroup cgroup) throws Exception {
        Configuration conf = configuration(local);
        try (MiniCluster mini = MiniClusters.oneSlot(conf)) {
            mini.start();
            LargeStateResult.Builder result = new LargeStateResult.Builder(job, backend, sizes);
            JobID id = submit(mini, conf, null);
            timeline.phase("load");
            double loadStart = timeline.seconds();
            awaitRecords(mini, id, sizes.loadRecords(job));
            result.load(sizes.loadRecords(job), timeline.seconds() - loadStart);
            result.steady(measure(mini, id, "steady", sizes.steadySeconds()));
            Stopped stopped = stop(mini, id);
            result.stopped(stopped);
            result.coldCache(dropPageCache());
            JobID restored = restore(mini, conf, stopped.checkpoints(), false, result);
            result.cold(measure(mini, restored, "cold", sizes.coldSeconds()));
            cancel(mini, restored);
            if (stopped.savepoint() != null) {
                dropPageCache();
                JobID fromSavepoint = restore(mini, conf, stopped.checkpoints(), true, result);
                awaitRecords(mini, fromSavepoint, LiveMetrics.RECORDS.get() + 1_000);
                cancel(mini, fromSavepoint);
            }
            return result.build(timeline.samples(), cgroup);
        }
    }

    private Configuration configuration(Path local) throws IOException {
        Configuration conf = new Configuration();
        JobBackends.configure(backend, conf, local);
        if (LargeStateJobs.asyncState(job)) {
            JobBackends.asyncExecutor(backend, conf);
        }
        BackendGauges.configure(conf);
        conf.set(CheckpointingOptions.INCREMENTAL_CHECKPOINTS, true);
        conf.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY,
                Files.createDirectories(dir.resolve("checkpoints")).toUri().toString());
        conf.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, Duration.ofSeconds(sizes.checkpointSeconds()));
        conf.set(CheckpointingOptions.EXTERNALIZED_CHECKPOINT_RETENTION,
                ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION);
        conf.setString("taskmanager.memory.managed.size", LargeStateBench.MANAGED_MEMORY);
        conf.set(RestartStrategyOptions.RESTART_STRATEGY, "none");
        conf.set(RestOptions.BIND_PORT, "0");
        conf.set(WebOptions.CHECKPOINTS_HISTORY_SIZE, 100_000);
        return conf;
    }

    /** Submits the job, restoring it from {@code restorePath} unless that is null. */
    private JobID submit(MiniCluster mini, Configuration conf, String restorePath) throws Exception {
        Configuration jobConf = new Configuration(conf);
        if (restorePath != null) {
            jobConf.set(StateRecoveryOptions.SAVEPOINT_PATH, restorePath);
        }
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(jobConf);
        env.setParallelism(1);
        LargeStateJobs.build(env, job, sizes);
        return mini.submitJob(env.getStreamGraph()).get().getJobID();
    }

    /** Runs a measured phase of {@code seconds}. */
    private Phase measure(MiniCluster mini, JobID id, String phase, long seconds) throws Exception {
        timeline.phase(phase);
        long start = System.nanoTime();
        long records = LiveMetrics.RECORDS.get();
        long cpu = ProcessCpu.nanos();
        long written = ExpiryJobBench.bytesWritten();
        long lookups = LiveMetrics.LOOKUPS.get();
        long missing = LiveMetrics.MISSING.get();
        long fired = LiveMetrics.WINDOWS_FIRED.get();
        long batches = BackendGauges.sum(BackendGauges.EXECUTOR, "batches");
        long requests = BackendGauges.sum(BackendGauges.EXECUTOR, "requests");
        BackendGauges.FlushWork flushes = BackendGauges.FlushWork.now();
        Thread.sleep(seconds * 1000);
        ensureRunning(mini, id);
        return new Phase((System.nanoTime() - start) / 1e9, LiveMetrics.RECORDS.get() - records,
                ProcessCpu.nanos() - cpu, ExpiryJobBench.bytesWritten() - written,
                timeline.phaseLatency(), LiveMetrics.LOOKUPS.get() - lookups, LiveMetrics.MISSING.get() - missing,
                LiveMetrics.WINDOWS_FIRED.get() - fired,
                BackendGauges.sum(BackendGauges.EXECUTOR, "batches") - batches,
                BackendGauges.sum(BackendGauges.EXECUTOR, "requests") - requests,
                BackendGauges.FlushWork.now().since(flushes));
    }

    /**
     * Takes a canonical savepoint (where the backend can) and a last checkpoint, then cancels the job
     * (its checkpoints retained).
     */
    private Stopped stop(MiniCluster mini, JobID id) throws Exception {
        String savepoint = null;
        long savepointMillis = -1;
        if (noCanonicalSavepoint(job, backend) == null) {
            timeline.phase("savepoint");
            long start = System.nanoTime();
            savepoint = savepoint(mini, id);
            savepointMillis = (System.nanoTime() - start) / 1_000_000;
        }
        timeline.phase("checkpoint");
        mini.triggerCheckpoint(id).get();
        cancel(mini, id);
        return new Stopped(CheckpointHistory.completed(mini.getArchivedExecutionGraph(id).get()), savepoint,
                savepointMillis);
    }

    /**
     * Why a run takes no canonical savepoint, or null when it takes one. Flink 2.2 itself refuses them for
     * operators with asynchronous state, whatever the backend ("Not supported yet").
     */
    static String noCanonicalSavepoint(String job, String backend) {
        if (LargeStateJobs.asyncState(job)) {
            return "refused by Flink (asynchronous state)";
        }
        return JobBackends.canonicalSavepoints(backend) ? null : "refused by the backend";
    }

    private String savepoint(MiniCluster mini, JobID id) throws Exception {
        try {
            return mini.triggerSavepoint(id, dir.resolve("savepoints").toUri().toString(), false,
                    SavepointFormatType.CANONICAL).get();
        } catch (ExecutionException e) {
            // A failing job aborts the savepoint before it ends: wait for its end to throw its own failure.
            mini.requestJobResult(id).get(30, TimeUnit.SECONDS);
            ensureRunning(mini, id);
            throw e;
        }
    }

    private static void cancel(MiniCluster mini, JobID id) throws Exception {
        mini.cancelJob(id).get();
        mini.requestJobResult(id).get();
    }

    /**
     * Submits the job restored from the last checkpoint or the savepoint among {@code checkpoints}, and
     * notes how long it took from submission until the stateful operator opened with its state.
     */
    private JobID restore(MiniCluster mini, Configuration conf, List<CheckpointHistory.Entry> checkpoints,
            boolean savepoint, LargeStateResult.Builder result) throws Exception {
        String path = checkpoints.stream().filter(c -> c.savepoint() == savepoint)
                .reduce((a, b) -> b).orElseThrow(() -> new IllegalStateException("no " + (savepoint ? "savepoint"
                        : "checkpoint") + " completed")).externalPath();
        timeline.phase(savepoint ? "restore-savepoint" : "restore-checkpoint");
        LiveMetrics.OPENED_AT_MILLIS.set(0);
        long submitted = System.currentTimeMillis();
        JobID id = submit(mini, conf, path);
        while (LiveMetrics.OPENED_AT_MILLIS.get() == 0) {
            ensureRunning(mini, id);
            Thread.sleep(20);
        }
        result.restored(savepoint, LiveMetrics.OPENED_AT_MILLIS.get() - submitted);
        return id;
    }

    private static void awaitRecords(MiniCluster mini, JobID id, long records) throws Exception {
        while (LiveMetrics.RECORDS.get() < records) {
            ensureRunning(mini, id);
            Thread.sleep(100);
        }
    }

    /** Throws with the job's failure when it ended: a run never reports numbers of a job that failed. */
    private static void ensureRunning(MiniCluster mini, JobID id) throws Exception {
        if (mini.getJobStatus(id).get().isGloballyTerminalState()) {
            throw new IllegalStateException("job " + id + " ended: " + mini.requestJobResult(id).get()
                    .getSerializedThrowable().map(t -> t.getFullStringifiedStackTrace()).orElse("no failure"));
        }
    }

    /**
     * Writes dirty pages out and drops the OS page cache, so what follows reads its state from disk.
     * Returns why it could not, or null when it did.
     */
    static String dropPageCache() {
        try {
            new ProcessBuilder("sync").inheritIO().start().waitFor();
            Files.writeString(Path.of("/proc/sys/vm/drop_caches"), "3");
            return null;
        } catch (IOException | InterruptedException | SecurityException e) {
            return String.format(Locale.ROOT, "cannot drop the page cache here (%s)", e.getMessage());
        }
    }
}
