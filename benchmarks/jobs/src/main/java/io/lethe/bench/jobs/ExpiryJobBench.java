package io.lethe.bench.jobs;

import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.StateTtlConfig;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.java.tuple.Tuple3;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.configuration.WebOptions;
import org.apache.flink.runtime.checkpoint.AbstractCheckpointStats;
import org.apache.flink.runtime.checkpoint.CheckpointStatsStatus;
import org.apache.flink.runtime.executiongraph.ArchivedExecutionGraph;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.runtime.minicluster.RpcServiceSharing;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.functions.sink.legacy.DiscardingSink;
import org.apache.flink.streaming.api.functions.windowing.WindowFunction;
import org.apache.flink.streaming.api.windowing.assigners.SlidingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.assigners.WindowAssigner;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;

/**
 * Window and TTL jobs on Lethe, Flink's RocksDB backend (embedded, frocksdbjni) and the HashMap
 * backend, one after another in this JVM, rounds interleaved (the backends' order rotated each round).
 * Per run: records per second, bytes the process wrote to disk per record (/proc/self/io, state
 * and checkpoints together), local state size sampled over time, and every completed checkpoint's
 * full and uploaded size from Flink's checkpoint statistics.
 *
 * <ul>
 *   <li><b>tumbling</b>: 20,000 keys, event time advancing 1 ms per 20 records, tumbling 10 s
 *       windows holding every element (a list per key and window: ~10 elements), counted when
 *       they fire.
 *   <li><b>sliding</b>: the same with 10 s windows sliding by 5 s (every element in two windows).
 *   <li><b>ttl</b>: de-duplication; every key seen four times, a value state per key with a 5 s
 *       processing-time TTL (Flink's default cleanup: RocksDB's compaction filter, Lethe's
 *       horizon, the HashMap backend's incremental cleanup).
 * </ul>
 *
 * Usage: {@code ExpiryJobBench [quick|full] [output directory]}: writes {@code jobs.csv}, {@code
 * jobs-state-size.csv}, {@code jobs-checkpoints.csv} and {@code jobs.settings.csv}. Quick: 1 M records per run, Lethe, RocksDB and
 * HashMap, one round. Full: 8 M records, also Lethe with delete tiles of 8 pages, three rounds.
 */
public final class ExpiryJobBench {
    /** lethe: defaults; lethe-h8: delete tiles of 8 pages (pages sorted by delete key within a tile). */
    private static final String[] BACKENDS = {"lethe", "lethe-h8", "rocksdb", "hashmap"};
    private static final long WINDOW_KEYS = 20_000;
    private static final long RECORDS_PER_MS = 20;
    private static final Duration WINDOW = Duration.ofSeconds(10);
    private static final Duration SLIDE = Duration.ofSeconds(5);
    private static final Duration TTL = Duration.ofSeconds(5);
    private static final String[] JOBS = {"tumbling", "sliding", "ttl"};
    /**
     * Checkpoints flush every backend's memtables: how much state reaches disk depends on it. 10 s in
     * full runs, 2 s in quick ones (runs of a few seconds), -Dlethe.bench.checkpoint-seconds to change.
     */
    private static Duration checkpointInterval = Duration.ofSeconds(10);

    private ExpiryJobBench() {}

    /** One completed checkpoint, from Flink's checkpoint statistics. */
    record Checkpoint(long id, long ms /* since the job was submitted, at its last acknowledgement */,
            long fullBytes, long checkpointedBytes, long metadataBytes) {}

    /** One run's measurements. */
    record Run(String job, String backend, int round, long records, double seconds, long bytesWritten,
            List<long[]> samples /* ms since submission, local bytes */, List<Checkpoint> checkpoints) {
        double recordsPerSecond() {
            return records / seconds;
        }

        double bytesPerRecord() {
            return (double) bytesWritten / records;
        }

        /** What the checkpoints uploaded (incremental: new files only) plus their metadata files. */
        long checkpointBytesWritten() {
            return checkpoints.stream().mapToLong(c -> c.checkpointedBytes() + c.metadataBytes()).sum();
        }

        /** Without the checkpoint files (the state backend's own writes: flushes, compactions, ...). */
        double stateBytesPerRecord() {
            return (double) Math.max(0, bytesWritten - checkpointBytesWritten()) / records;
        }

        long maxLocal() {
            return samples.stream().mapToLong(s -> s[1]).max().orElse(0);
        }

        /** Local size at a share of the run (0..1), from the samples. */
        long localAt(double share) {
            if (samples.isEmpty()) {
                return 0;
            }
            long t = (long) (share * seconds * 1000);
            long[] best = samples.get(0);
            for (long[] s : samples) {
                if (s[0] <= t) {
                    best = s;
                }
            }
            return best[1];
        }

        /**
         * The checkpoints taken while the input was read: all but the last. A bounded job with
         * checkpoints finishes only after a final checkpoint, taken when its input has ended and the last
         * windows have fired (the benchmark's runs confirm it: the last completes at the job's end).
         */
        List<Checkpoint> duringRun() {
            return checkpoints.isEmpty() ? List.of() : checkpoints.subList(0, checkpoints.size() - 1);
        }

        /** The largest full size of a checkpoint while the input was read; 0 without one. */
        long maxCheckpoint() {
            return duringRun().stream().mapToLong(Checkpoint::fullBytes).max().orElse(0);
        }

        /** The full size of the final checkpoint (what is left once the input ended); -1 without one. */
        long finalCheckpoint() {
            return checkpoints.isEmpty() ? -1 : checkpoints.get(checkpoints.size() - 1).fullBytes();
        }
    }

    public static void main(String[] args) throws Exception {
        boolean full = args.length > 0 && args[0].equals("full");
        Path out = Path.of(args.length > 1 ? args[1] : "target/jobs").toAbsolutePath();
        Files.createDirectories(out);
        // Full runs last several checkpoint intervals and TTLs (20-70 s each), so state size over time
        // shows where each backend settles.
        long records = full ? 8_000_000 : 1_000_000;
        int rounds = full ? 3 : 1;
        String[] backends = full ? BACKENDS : new String[] {"lethe", "rocksdb", "hashmap"};
        checkpointInterval = Duration.ofSeconds(Long.getLong("lethe.bench.checkpoint-seconds", full ? 10 : 2));
        System.out.printf("Job benchmark (%s): %,d records per run, %d round(s), parallelism 1, checkpoints"
                + " every %d s, output %s%n", full ? "full" : "quick", records, rounds,
                checkpointInterval.toSeconds(), out);
        List<Run> runs = new ArrayList<>();
        for (String job : JOBS) {
            for (int round = 1; round <= rounds; round++) {
                for (int i = 0; i < backends.length; i++) {
                    String backend = backends[(i + round - 1) % backends.length];
                    Run r = run(job, backend, round, records, out.resolve("work"));
                    runs.add(r);
                    System.out.printf("  %-8s %-8s round %d: %,10.0f records/s, %6.1f bytes written/record (%5.1f"
                                    + " without checkpoints), local max %s, %d checkpoints up to %s, final %s%n", job,
                            backend, round, r.recordsPerSecond(), r.bytesPerRecord(), r.stateBytesPerRecord(),
                            mib(r.maxLocal()), r.duringRun().size(), mib(r.maxCheckpoint()),
                            mib(r.finalCheckpoint()));
                }
            }
        }
        deleteTree(out.resolve("work"));
        write(runs, out, records, rounds, backends);
    }

    private static Run run(String job, String backend, int round, long records, Path work) throws Exception {
        Path dir = work.resolve(job + "-" + backend + "-" + round);
        deleteTree(dir);
        Path local = Files.createDirectories(dir.resolve("local"));
        Path checkpoints = Files.createDirectories(dir.resolve("checkpoints"));
        Configuration conf = new Configuration();
        switch (backend) {
            case "lethe", "lethe-h8" -> {
                conf.set(StateBackendOptions.STATE_BACKEND, "io.lethe.flink.LetheStateBackendFactory");
                conf.setString("state.backend.lethe.localdir", local.toString());
                conf.setString("state.backend.lethe.delete-persistence-threshold", "10 s");
                if (backend.equals("lethe-h8")) {
                    conf.setString("state.backend.lethe.pages-per-tile", "8");
                }
            }
            case "rocksdb" -> {
                conf.set(StateBackendOptions.STATE_BACKEND, "rocksdb");
                conf.setString("state.backend.rocksdb.localdir", local.toString());
            }
            default -> conf.set(StateBackendOptions.STATE_BACKEND, "hashmap");
        }
        conf.set(CheckpointingOptions.INCREMENTAL_CHECKPOINTS, !backend.equals("hashmap"));
        conf.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, checkpoints.toUri().toString());
        conf.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, checkpointInterval);
        conf.setString("taskmanager.memory.managed.size", "256m");
        conf.set(RestOptions.BIND_PORT, "0");
        // Statistics of every checkpoint of the run, not only the last 10.
        conf.set(WebOptions.CHECKPOINTS_HISTORY_SIZE, 100_000);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(1, conf);
        switch (job) {
            case "tumbling" -> windowJob(env, records, TumblingEventTimeWindows.of(WINDOW));
            case "sliding" -> windowJob(env, records, SlidingEventTimeWindows.of(WINDOW, SLIDE));
            default -> ttlJob(env, records);
        }
        // The MiniCluster a local environment would start (Flink's PerJobMiniClusterFactory), held here so
        // that the finished job's checkpoint statistics can be read from it.
        MiniClusterConfiguration cluster = new MiniClusterConfiguration.Builder().setConfiguration(conf)
                .setNumTaskManagers(1).setNumSlotsPerTaskManager(1).setRpcServiceSharing(RpcServiceSharing.SHARED)
                .build();
        List<long[]> samples = new ArrayList<>();
        List<Checkpoint> completed = new ArrayList<>();
        AtomicBoolean done = new AtomicBoolean();
        long seconds;
        long written;
        try (MiniCluster mini = new MiniCluster(cluster)) {
            mini.start();
            long start = System.nanoTime();
            long startMillis = System.currentTimeMillis();
            long writtenBefore = bytesWritten();
            Thread sampler = new Thread(() -> sample(job + "/" + backend, local, start, done, samples), "sampler");
            sampler.setDaemon(true);
            sampler.start();
            JobID id = mini.submitJob(env.getStreamGraph()).get().getJobID();
            JobExecutionResult result;
            try {
                result = mini.requestJobResult(id).get().toJobExecutionResult(ExpiryJobBench.class.getClassLoader());
            } finally {
                done.set(true);
                sampler.join();
            }
            written = bytesWritten() - writtenBefore;
            seconds = result.getNetRuntime();
            ArchivedExecutionGraph graph = mini.getArchivedExecutionGraph(id).get();
            for (AbstractCheckpointStats c : graph.getCheckpointStatsSnapshot().getHistory().getCheckpoints()) {
                if (c.getStatus() == CheckpointStatsStatus.COMPLETED) {
                    completed.add(new Checkpoint(c.getCheckpointId(), c.getLatestAckTimestamp() - startMillis,
                            c.getStateSize(), c.getCheckpointedSize(), c.getMetadataSize()));
                }
            }
        }
        completed.sort(Comparator.comparingLong(Checkpoint::id));
        deleteTree(dir);
        return new Run(job, backend, round, records, seconds / 1000.0, written, samples, completed);
    }

    /** Samples the local directory's size every 250 ms until {@code done}, printing it every 5 s. */
    private static void sample(String what, Path local, long start, AtomicBoolean done, List<long[]> samples) {
        long nextPrint = 5_000;
        while (!done.get()) {
            long t = (System.nanoTime() - start) / 1_000_000;
            long[] s = {t, size(local)};
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

    /** Event-time windows holding every element, counted when they fire. */
    static void windowJob(StreamExecutionEnvironment env, long records,
            WindowAssigner<Object, TimeWindow> windows) {
        DataStream<Tuple3<Long, Long, Long>> events = env.fromSequence(0, records - 1)
                .map(i -> Tuple3.of(mix(i) % WINDOW_KEYS, i / RECORDS_PER_MS, i))
                .returns(org.apache.flink.api.common.typeinfo.Types.TUPLE(
                        org.apache.flink.api.common.typeinfo.Types.LONG, org.apache.flink.api.common.typeinfo.Types.LONG,
                        org.apache.flink.api.common.typeinfo.Types.LONG))
                .assignTimestampsAndWatermarks(WatermarkStrategy.<Tuple3<Long, Long, Long>>forMonotonousTimestamps()
                        .withTimestampAssigner((e, t) -> e.f1));
        events.keyBy(e -> e.f0)
                .window(windows)
                .apply(new WindowFunction<Tuple3<Long, Long, Long>, Long, Long, TimeWindow>() {
                    @Override
                    public void apply(Long key, TimeWindow window, Iterable<Tuple3<Long, Long, Long>> input,
                            Collector<Long> out) {
                        long n = 0;
                        for (Tuple3<Long, Long, Long> ignored : input) {
                            n++;
                        }
                        out.collect(n);
                    }
                })
                .addSink(new DiscardingSink<>());
    }

    /** De-duplication with a TTL'd value state; every key arrives four times, spread out. */
    static void ttlJob(StreamExecutionEnvironment env, long records) {
        long keys = Math.max(1, records / 4);
        env.fromSequence(0, records - 1)
                .keyBy(i -> mix(i) % keys)
                .process(new Dedup())
                .addSink(new DiscardingSink<>());
    }

    static final class Dedup extends KeyedProcessFunction<Long, Long, Long> {
        private transient ValueState<Long> seen;

        @Override
        public void open(OpenContext ctx) {
            ValueStateDescriptor<Long> d = new ValueStateDescriptor<>("seen", Long.class);
            d.enableTimeToLive(StateTtlConfig.newBuilder(TTL).build());
            seen = getRuntimeContext().getState(d);
        }

        @Override
        public void processElement(Long value, Context ctx, Collector<Long> out) throws Exception {
            if (seen.value() == null) {
                seen.update(value);
                out.collect(value);
            }
        }
    }

    /** A fixed permutation-like hash, so keys repeat spread over the input. */
    static long mix(long i) {
        long x = i * 0x9E3779B97F4A7C15L;
        x ^= x >>> 31;
        return x & Long.MAX_VALUE;
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

    static long size(Path dir) {
        try (Stream<Path> s = Files.walk(dir)) {
            return s.filter(Files::isRegularFile).mapToLong(p -> {
                try {
                    return Files.size(p);
                } catch (IOException e) {
                    return 0;  // deleted while walking
                }
            }).sum();
        } catch (IOException | java.io.UncheckedIOException e) {
            return 0;
        }
    }

    static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    static String mib(long bytes) {
        return String.format(Locale.ROOT, "%.1f MiB", bytes / 1048576.0);
    }

    // ---- Writing.

    private static void write(List<Run> runs, Path out, long records, int rounds, String[] backends)
            throws IOException {
        try (PrintWriter csv = new PrintWriter(Files.newBufferedWriter(out.resolve("jobs.csv")))) {
            csv.println("job,backend,round,records,seconds,records_per_s,bytes_written_per_record,"
                    + "state_bytes_written_per_record,local_max_bytes,local_end_bytes,checkpoints,max_checkpoint_bytes,"
                    + "final_checkpoint_bytes,checkpointed_bytes_per_record");
            for (Run r : runs) {
                boolean none = r.duringRun().isEmpty();
                csv.printf(Locale.ROOT, "%s,%s,%d,%d,%.3f,%.0f,%.2f,%.2f,%d,%d,%d,%s,%s,%.2f%n", r.job(), r.backend(),
                        r.round(), r.records(), r.seconds(), r.recordsPerSecond(), r.bytesPerRecord(),
                        r.stateBytesPerRecord(), r.maxLocal(), r.localAt(1.0), r.duringRun().size(),
                        none ? "" : Long.toString(r.maxCheckpoint()),
                        r.finalCheckpoint() < 0 ? "" : Long.toString(r.finalCheckpoint()),
                        (double) r.checkpointBytesWritten() / r.records());
            }
        }
        try (PrintWriter csv = new PrintWriter(Files.newBufferedWriter(out.resolve("jobs-state-size.csv")))) {
            csv.println("job,backend,round,ms,local_bytes");
            for (Run r : runs) {
                for (long[] s : r.samples()) {
                    csv.printf("%s,%s,%d,%d,%d%n", r.job(), r.backend(), r.round(), s[0], s[1]);
                }
            }
        }
        try (PrintWriter csv = new PrintWriter(Files.newBufferedWriter(out.resolve("jobs-checkpoints.csv")))) {
            csv.println("job,backend,round,checkpoint,ms,full_bytes,checkpointed_bytes,metadata_bytes,final");
            for (Run r : runs) {
                for (Checkpoint c : r.checkpoints()) {
                    csv.printf("%s,%s,%d,%d,%d,%d,%d,%d,%d%n", r.job(), r.backend(), r.round(), c.id(), c.ms(),
                            c.fullBytes(), c.checkpointedBytes(), c.metadataBytes(),
                            c == r.checkpoints().get(r.checkpoints().size() - 1) ? 1 : 0);
                }
            }
        }
        try (PrintWriter csv = new PrintWriter(Files.newBufferedWriter(out.resolve("jobs.settings.csv")))) {
            csv.println("key,value");
            csv.printf(Locale.ROOT, "what,Flink jobs on a MiniCluster (parallelism 1%s), one per run, in this JVM%n",
                    ", 256 MiB managed memory");
            csv.printf(Locale.ROOT, "records,%,d per run, generated (fromSequence), as fast as the job takes them%n",
                    records);
            csv.printf("tumbling,%,d keys; event time advancing 1 ms per %d records; tumbling %d s windows holding"
                    + " every element (list state); counted when they fire%n", WINDOW_KEYS, RECORDS_PER_MS,
                    WINDOW.toSeconds());
            csv.printf("sliding,as tumbling but windows of %d s sliding by %d s (each element in two windows)%n",
                    WINDOW.toSeconds(), SLIDE.toSeconds());
            csv.printf("ttl,de-duplication: every key seen four times spread over the input; a value state per key"
                    + " with a %d s processing-time TTL and Flink's default cleanup (RocksDB: compaction filter;"
                    + " HashMap: incremental cleanup; Lethe: the horizon)%n", TTL.toSeconds());
            csv.printf("backends,%s; every backend with its defaults (Lethe: D_th 10 s; lethe-h8: delete tiles of 8"
                    + " pages)%n", String.join(" / ", backends));
            csv.printf("checkpoints,every %d s; incremental (full for HashMap)%n", checkpointInterval.toSeconds());
            csv.println("bytes written,what the process wrote to disk (/proc/self/io) per record; without checkpoint"
                    + " files: minus what the checkpoints uploaded and their metadata (the HashMap row shows the"
                    + " MiniCluster's own writes)");
            csv.println("local state,the backend's local directory sampled every 250 ms");
            csv.println("checkpoint size,from Flink's checkpoint statistics: the full size of each completed checkpoint"
                    + " (all the state it refers to) and its checkpointed size (what it uploaded: for incremental"
                    + " checkpoints the new files only); the largest while the input was read (empty when a run"
                    + " ended before its first checkpoint) and the final one, which Flink takes after the input ended"
                    + " and the last windows fired");
            csv.printf("rounds,%d; backends interleaved (order rotated each round)%n", rounds);
        }
        System.out.println("wrote " + out.resolve("jobs.csv") + ", " + out.resolve("jobs-state-size.csv") + " and "
                + out.resolve("jobs-checkpoints.csv"));
    }
}
