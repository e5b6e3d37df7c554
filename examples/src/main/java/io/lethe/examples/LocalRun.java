package io.lethe.examples;

import io.lethe.flink.LetheConfigurationException;

import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.connector.datagen.source.GeneratorFunction;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.util.ExceptionUtils;
import org.apache.flink.util.ParameterTool;
import org.apache.flink.util.function.SerializableFunction;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Runs an example job on a MiniCluster in this JVM with the Lethe backend (or, for comparison,
 * the HashMap backend), printing progress while it runs and collecting what the report needs:
 * records in and out, the engine's gauges, the local state size over time.
 *
 * <p>Options: {@code --backend lethe|hashmap}, {@code --parallelism N} (2), {@code --work-dir DIR}
 * (a fresh temporary directory, deleted afterwards), {@code --delete-persistence-threshold} (D_th,
 * {@code 10 s}), {@code --checkpoint-interval} ({@code 5 s}).
 */
public final class LocalRun {
    /** Counter of records taken in (clicks), summed over subtasks. */
    static final String INPUT_COUNTER = "exampleRecordsIn";
    /** Counter of results emitted, summed over subtasks. */
    static final String OUTPUT_COUNTER = "exampleRecordsOut";
    /** Accumulators of the results: their number and the sum of their fingerprints. */
    static final String RESULTS = "results";
    static final String FINGERPRINT = "fingerprint";

    private static final long PROGRESS_EVERY_MS = 5_000;

    final String backend;
    final int parallelism;
    final Duration deletePersistenceThreshold;
    final Duration checkpointInterval;
    private final Path workDir;
    private final boolean deleteWorkDir;

    // Observed while the job runs.
    long maxLocalBytes;
    long lastLocalBytes;
    long maxOldestTombstoneMs;
    double seconds;

    LocalRun(ParameterTool params) throws IOException {
        backend = params.get("backend", "lethe");
        if (!backend.equals("lethe") && !backend.equals("hashmap")) {
            throw new IllegalArgumentException("--backend is lethe or hashmap, not " + backend);
        }
        parallelism = params.getInt("parallelism", 2);
        deletePersistenceThreshold = parseDuration(params.get("delete-persistence-threshold", "10 s"));
        checkpointInterval = parseDuration(params.get("checkpoint-interval", "5 s"));
        if (params.has("work-dir")) {
            workDir = Files.createDirectories(Path.of(params.get("work-dir")).toAbsolutePath());
            deleteWorkDir = false;
        } else {
            workDir = Files.createTempDirectory("lethe-example-");
            deleteWorkDir = true;
        }
    }

    private static Duration parseDuration(String text) {
        return org.apache.flink.util.TimeUtils.parseDuration(text);
    }

    Path localDir() {
        return workDir.resolve("local");
    }

    /** The cluster and job configuration: Lethe selected by configuration alone. */
    Configuration configuration() {
        Configuration conf = new Configuration();
        if (backend.equals("lethe")) {
            conf.set(StateBackendOptions.STATE_BACKEND, "io.lethe.flink.LetheStateBackendFactory");
            conf.setString("state.backend.lethe.localdir", localDir().toString());
            conf.setString("state.backend.lethe.delete-persistence-threshold",
                    deletePersistenceThreshold.toMillis() + " ms");
            conf.set(CheckpointingOptions.INCREMENTAL_CHECKPOINTS, true);
        } else {
            conf.set(StateBackendOptions.STATE_BACKEND, "hashmap");
        }
        conf.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, workDir.resolve("checkpoints").toUri().toString());
        conf.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, checkpointInterval);
        conf.set(RestartStrategyOptions.RESTART_STRATEGY, "none");
        conf.setString("taskmanager.memory.managed.size", "256m");
        conf.setString("metrics.reporter.collector.factory.class", MetricsCollector.Factory.class.getName());
        return conf;
    }

    StreamExecutionEnvironment environment() {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(parallelism, configuration());
        env.getConfig().enableObjectReuse();
        return env;
    }

    /**
     * Clicks {@code [0, n)} of {@code stream} at {@code rate} per second (0: as fast as possible),
     * from one generator (parallel generators would each hold back the others' windows).
     */
    static DataStream<Click> generated(StreamExecutionEnvironment env, ClickStream stream, long n, long rate) {
        // Paced by the generator itself: Flink's rate limiter waits once per record, which at
        // 100,000 records per second costs more than the job.
        DataGeneratorSource<Click> source =
                new DataGeneratorSource<>(new Generated(stream, rate), n, TypeInformation.of(Click.class));
        return env.fromSource(source, KafkaIo.watermarks(), "generated clicks").setParallelism(1).uid("clicks-source");
    }

    /** Counts and fingerprints the results (accumulators), then discards them. */
    static <T> void fingerprintAndDiscard(DataStream<T> results, SerializableFunction<T, Long> fingerprint) {
        results.map(new Fingerprint<>(fingerprint)).returns(results.getType()).name("fingerprint results")
                .sinkTo(new DiscardingSink<>()).name("discard");
    }

    /** Runs the job, printing a progress line every few seconds; cleans the work directory up. */
    JobExecutionResult execute(StreamExecutionEnvironment env, String name) throws Exception {
        MetricsCollector.reset();
        long start = System.nanoTime();
        JobClient client = env.executeAsync(name);
        CompletableFuture<JobExecutionResult> result = client.getJobExecutionResult();
        long nextPrint = PROGRESS_EVERY_MS;
        long lastIn = 0;
        try {
            while (true) {
                try {
                    JobExecutionResult r;
                    try {
                        r = result.get(1, TimeUnit.SECONDS);
                    } catch (ExecutionException failed) {
                        System.err.println("The job failed: " + reason(failed));
                        throw failed;
                    }
                    seconds = (System.nanoTime() - start) / 1e9;
                    // The gauges' final values (the engines closed); the local directory is gone.
                    maxOldestTombstoneMs = Math.max(maxOldestTombstoneMs, MetricsCollector.max("oldest-tombstone-age-ms"));
                    return r;
                } catch (TimeoutException running) {
                    sample();
                    long ms = (System.nanoTime() - start) / 1_000_000;
                    if (ms >= nextPrint) {
                        progress(ms, lastIn);
                        lastIn = MetricsCollector.sum(INPUT_COUNTER);
                        nextPrint += PROGRESS_EVERY_MS;
                    }
                }
            }
        } finally {
            if (!result.isDone()) {
                client.cancel();
            }
        }
    }

    /** What to fix: a Lethe configuration problem's message, or else the root cause's. */
    private static String reason(Throwable failure) {
        return ExceptionUtils.findThrowable(failure, LetheConfigurationException.class)
                .map(Throwable::getMessage)
                .orElseGet(() -> String.valueOf(ExceptionUtils.stripExecutionException(failure).getMessage()));
    }

    private void sample() {
        if (backend.equals("lethe")) {
            lastLocalBytes = Directories.size(localDir());
            maxLocalBytes = Math.max(maxLocalBytes, lastLocalBytes);
            maxOldestTombstoneMs = Math.max(maxOldestTombstoneMs, MetricsCollector.max("oldest-tombstone-age-ms"));
        }
    }

    /** One progress line; the rate is over the last interval. */
    private void progress(long ms, long inBefore) {
        long in = MetricsCollector.sum(INPUT_COUNTER);
        StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "[%3d s] %,11d records in (%,.0f/s), %,9d out",
                ms / 1000, in, (in - inBefore) * 1000.0 / PROGRESS_EVERY_MS, MetricsCollector.sum(OUTPUT_COUNTER)));
        if (backend.equals("lethe")) {
            line.append(String.format(Locale.ROOT, ", local state %s, pages dropped %,d, oldest tombstone %.1f s",
                    mib(lastLocalBytes), MetricsCollector.sum("pages-dropped"),
                    MetricsCollector.max("oldest-tombstone-age-ms") / 1000.0));
        }
        System.out.println(line);
    }

    /** The report's engine part: expiry, page drops, local state, tombstone ages, writes. */
    void printEngineReport() {
        if (!backend.equals("lethe")) {
            System.out.println("  (HashMap backend: state on the heap, no engine report)");
            return;
        }
        for (String status : MetricsCollector.strings(".lethe.expiry.")) {
            row("expiry", status);
        }
        row("expired by page drops", String.format(Locale.ROOT,
                "%,d pages (%s) dropped whole without reading them; %,d partly covered pages rewritten",
                MetricsCollector.sum("pages-dropped"), mib(MetricsCollector.sum("page-bytes-dropped")),
                MetricsCollector.sum("pages-rewritten")));
        row("local state", String.format(Locale.ROOT, "peak %s, %s at the last sample before the end", mib(maxLocalBytes),
                mib(lastLocalBytes)));
        long dthMs = deletePersistenceThreshold.toMillis();
        row("oldest tombstone", String.format(Locale.ROOT, "at most %.1f s during the run; D_th = %.1f s: %s",
                maxOldestTombstoneMs / 1000.0, dthMs / 1000.0,
                maxOldestTombstoneMs <= dthMs ? "within the bound" : "OVER the bound"));
        row("engine writes", String.format(Locale.ROOT, "flushes %s, compactions %s (%,d delete-driven)",
                mib(MetricsCollector.sum("bytes-written-flush")), mib(MetricsCollector.sum("bytes-written-compaction")),
                MetricsCollector.sum("compactions-delete-driven")));
    }

    static void row(String label, String text) {
        System.out.printf(Locale.ROOT, "  %-22s %s%n", label, text);
    }

    /** Deletes the work directory if this run created it. */
    void cleanUp() throws IOException {
        if (deleteWorkDir) {
            Directories.deleteTree(workDir);
        }
    }

    static String mib(long bytes) {
        return String.format(Locale.ROOT, "%.1f MiB", bytes / 1048576.0);
    }

    static long accumulator(JobExecutionResult r, String name) {
        Long v = r.getAccumulatorResult(name);
        return v == null ? 0 : v;
    }

    /** The generated clicks, counted and paced. */
    static final class Generated implements GeneratorFunction<Long, Click> {
        /** Pace in steps of this many records: one clock read and at most one sleep per step. */
        private static final int STEP = 1024;
        private final ClickStream stream;
        private final long rate;
        private transient Counter in;
        private transient long startNanos;
        private transient long emitted;

        Generated(ClickStream stream, long rate) {
            this.stream = stream;
            this.rate = rate;
        }

        @Override
        public void open(SourceReaderContext context) {
            in = context.metricGroup().counter(INPUT_COUNTER);
            startNanos = System.nanoTime();
        }

        @Override
        public Click map(Long index) throws InterruptedException {
            in.inc();
            if (rate > 0 && ++emitted % STEP == 0) {
                long aheadNanos = startNanos + emitted * 1_000_000_000L / rate - System.nanoTime();
                if (aheadNanos > 1_000_000) {
                    Thread.sleep(aheadNanos / 1_000_000);
                }
            }
            return stream.click(index);
        }
    }

    /** Counts results and sums their fingerprints (accumulators: exact at the end of the job). */
    static final class Fingerprint<T> extends RichMapFunction<T, T> {
        private final SerializableFunction<T, Long> fingerprint;
        private transient LongCounter results;
        private transient LongCounter sum;
        private transient Counter out;

        Fingerprint(SerializableFunction<T, Long> fingerprint) {
            this.fingerprint = fingerprint;
        }

        @Override
        public void open(OpenContext context) {
            results = getRuntimeContext().getLongCounter(RESULTS);
            sum = getRuntimeContext().getLongCounter(FINGERPRINT);
            out = getRuntimeContext().getMetricGroup().counter(OUTPUT_COUNTER);
        }

        @Override
        public T map(T value) throws Exception {
            results.add(1);
            sum.add(fingerprint.apply(value));
            out.inc();
            return value;
        }
    }
}
