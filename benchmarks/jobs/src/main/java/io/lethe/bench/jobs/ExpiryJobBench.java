package io.lethe.bench.jobs;

import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.StateTtlConfig;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.java.tuple.Tuple3;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.functions.sink.legacy.DiscardingSink;
import org.apache.flink.streaming.api.functions.windowing.WindowFunction;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;

import javax.imageio.ImageIO;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;

/**
 * Window and TTL jobs on Lethe, Flink's RocksDB backend (embedded, frocksdbjni) and the HashMap
 * backend, one after another in this JVM, rounds interleaved (Lethe, RocksDB, HashMap, Lethe, ...).
 * Per run: records per second, bytes the process wrote to disk per record (/proc/self/io, state
 * and checkpoints together), local state size sampled over time, checkpoint size (the checkpoint
 * directory, sampled while the job runs: Flink deletes it when a job finishes).
 *
 * <ul>
 *   <li><b>window</b>: 20,000 keys, event time advancing 1 ms per 20 records, tumbling 10 s
 *       windows holding every element (a list per key and window: ~10 elements), counted when
 *       they fire.
 *   <li><b>ttl</b>: de-duplication; every key seen four times, a value state per key with a 5 s
 *       processing-time TTL (Flink's default cleanup: RocksDB's compaction filter, Lethe's
 *       horizon, the HashMap backend's incremental cleanup).
 * </ul>
 *
 * Usage: {@code ExpiryJobBench [quick|full] [output directory]}.
 */
public final class ExpiryJobBench {
    /** lethe: defaults; lethe-h8: delete tiles of 8 pages (pages sorted by delete key within a tile). */
    private static final String[] BACKENDS = {"lethe", "lethe-h8", "rocksdb", "hashmap"};
    private static final long WINDOW_KEYS = 20_000;
    private static final long RECORDS_PER_MS = 20;
    private static final Duration WINDOW = Duration.ofSeconds(10);
    private static final Duration TTL = Duration.ofSeconds(5);
    /** Checkpoints flush every backend's memtables: how much state reaches disk depends on it. */
    private static final Duration CHECKPOINT_INTERVAL =
            Duration.ofSeconds(Long.getLong("lethe.bench.checkpoint-seconds", 10));

    private ExpiryJobBench() {}

    /** One run's measurements. */
    record Run(String job, String backend, int round, long records, double seconds, long bytesWritten,
            long checkpointBytesWritten, List<long[]> samples /* ms since start, local bytes, checkpoint bytes */) {
        double recordsPerSecond() {
            return records / seconds;
        }

        double bytesPerRecord() {
            return (double) bytesWritten / records;
        }

        /** Without the checkpoint files (the state backend's own writes: flushes, compactions, ...). */
        double stateBytesPerRecord() {
            return (double) Math.max(0, bytesWritten - checkpointBytesWritten) / records;
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

        long lastCheckpoint() {
            long last = 0;
            for (long[] s : samples) {
                if (s[2] > 0) {
                    last = s[2];
                }
            }
            return last;
        }
    }

    public static void main(String[] args) throws Exception {
        boolean full = args.length > 0 && args[0].equals("full");
        Path out = Path.of(args.length > 1 ? args[1] : "target/jobs").toAbsolutePath();
        Files.createDirectories(out);
        long records = full ? 6_000_000 : 2_000_000;
        int rounds = full ? 3 : 1;
        System.out.printf("Expiry job benchmark (%s): %,d records per run, %d round(s), parallelism 1, checkpoints"
                + " every %d s, output %s%n", full ? "full" : "quick", records, rounds,
                CHECKPOINT_INTERVAL.toSeconds(), out);
        List<Run> runs = new ArrayList<>();
        for (String job : new String[] {"window", "ttl"}) {
            for (int round = 1; round <= rounds; round++) {
                for (String backend : BACKENDS) {
                    Run r = run(job, backend, round, records, out.resolve("work"));
                    runs.add(r);
                    System.out.printf("  %-6s %-8s round %d: %,10.0f records/s, %6.1f bytes written/record (%5.1f"
                                    + " without checkpoints), local max %s, last checkpoint %s%n", job, backend, round,
                            r.recordsPerSecond(), r.bytesPerRecord(), r.stateBytesPerRecord(), mib(r.maxLocal()),
                            mib(r.lastCheckpoint()));
                }
            }
        }
        deleteTree(out.resolve("work"));
        report(runs, out);
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
        conf.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, CHECKPOINT_INTERVAL);
        conf.setString("taskmanager.memory.managed.size", "256m");
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(1, conf);
        if (job.equals("window")) {
            windowJob(env, records);
        } else {
            ttlJob(env, records);
        }
        List<long[]> samples = new ArrayList<>();
        Map<Path, Long> checkpointFiles = new java.util.HashMap<>();  // every file seen, at its largest
        AtomicBoolean done = new AtomicBoolean();
        long start = System.nanoTime();
        long writtenBefore = bytesWritten();
        Thread sampler = new Thread(() -> {
            long nextPrint = 5_000;
            while (!done.get()) {
                long t = (System.nanoTime() - start) / 1_000_000;
                long[] s = {t, size(local), size(checkpoints)};
                record(checkpoints, checkpointFiles);
                synchronized (samples) {
                    samples.add(s);
                }
                if (t >= nextPrint) {
                    System.out.printf("    %s/%s: %d s, local %s, checkpoints %s%n", job, backend, t / 1000,
                            mib(s[1]), mib(s[2]));
                    nextPrint += 5_000;
                }
                try {
                    Thread.sleep(250);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "sampler");
        sampler.setDaemon(true);
        sampler.start();
        JobExecutionResult result = env.execute(job + " on " + backend);
        done.set(true);
        sampler.join();
        record(checkpoints, checkpointFiles);
        long written = bytesWritten() - writtenBefore;
        long checkpointWritten = checkpointFiles.values().stream().mapToLong(Long::longValue).sum();
        double seconds = result.getNetRuntime() / 1000.0;
        deleteTree(dir);
        return new Run(job, backend, round, records, seconds, written, checkpointWritten, samples);
    }

    /** Tumbling event-time windows holding every element, counted when they fire. */
    static void windowJob(StreamExecutionEnvironment env, long records) {
        DataStream<Tuple3<Long, Long, Long>> events = env.fromSequence(0, records - 1)
                .map(i -> Tuple3.of(mix(i) % WINDOW_KEYS, i / RECORDS_PER_MS, i))
                .returns(org.apache.flink.api.common.typeinfo.Types.TUPLE(
                        org.apache.flink.api.common.typeinfo.Types.LONG, org.apache.flink.api.common.typeinfo.Types.LONG,
                        org.apache.flink.api.common.typeinfo.Types.LONG))
                .assignTimestampsAndWatermarks(WatermarkStrategy.<Tuple3<Long, Long, Long>>forMonotonousTimestamps()
                        .withTimestampAssigner((e, t) -> e.f1));
        events.keyBy(e -> e.f0)
                .window(TumblingEventTimeWindows.of(WINDOW))
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

    /** Notes every file under {@code dir} at its largest size seen (checkpoint files never change). */
    static void record(Path dir, Map<Path, Long> files) {
        try (Stream<Path> s = Files.walk(dir)) {
            s.filter(Files::isRegularFile).forEach(p -> {
                try {
                    files.merge(p, Files.size(p), Math::max);
                } catch (IOException e) {
                    // deleted while walking
                }
            });
        } catch (IOException | java.io.UncheckedIOException e) {
            // the directory changed while walking: the next sample sees it
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

    // ---- Reporting.

    private static void report(List<Run> runs, Path out) throws IOException {
        try (PrintWriter csv = new PrintWriter(Files.newBufferedWriter(out.resolve("expiry-jobs.csv")))) {
            csv.println("job,backend,round,records,seconds,records_per_s,bytes_written_per_record,"
                    + "state_bytes_written_per_record,local_max_bytes,local_end_bytes,last_checkpoint_bytes");
            for (Run r : runs) {
                csv.printf(Locale.ROOT, "%s,%s,%d,%d,%.3f,%.0f,%.1f,%.1f,%d,%d,%d%n", r.job(), r.backend(), r.round(),
                        r.records(), r.seconds(), r.recordsPerSecond(), r.bytesPerRecord(), r.stateBytesPerRecord(),
                        r.maxLocal(), r.localAt(1.0), r.lastCheckpoint());
            }
        }
        try (PrintWriter csv = new PrintWriter(Files.newBufferedWriter(out.resolve("expiry-jobs-state-size.csv")))) {
            csv.println("job,backend,round,ms,local_bytes,checkpoint_bytes");
            for (Run r : runs) {
                for (long[] s : r.samples()) {
                    csv.printf("%s,%s,%d,%d,%d,%d%n", r.job(), r.backend(), r.round(), s[0], s[1], s[2]);
                }
            }
        }
        System.out.println();
        for (String job : new String[] {"window", "ttl"}) {
            System.out.printf("%s job (median of rounds; ratios against Flink's RocksDB backend)%n", job);
            System.out.println("| backend | records/s | x RocksDB | bytes written/record | x RocksDB |"
                    + " without checkpoints | x RocksDB | local state at 25 % / 50 % / 75 % / end | max |"
                    + " last checkpoint |");
            System.out.println("|---|---|---|---|---|---|---|---|---|---|");
            Map<String, List<Run>> by = new LinkedHashMap<>();
            for (Run r : runs) {
                if (r.job().equals(job)) {
                    by.computeIfAbsent(r.backend(), b -> new ArrayList<>()).add(r);
                }
            }
            double rocksRate = median(by.get("rocksdb"), Run::recordsPerSecond);
            double rocksBytes = median(by.get("rocksdb"), Run::bytesPerRecord);
            double rocksState = median(by.get("rocksdb"), Run::stateBytesPerRecord);
            for (Map.Entry<String, List<Run>> e : by.entrySet()) {
                List<Run> rs = e.getValue();
                double rate = median(rs, Run::recordsPerSecond);
                double bytes = median(rs, Run::bytesPerRecord);
                double state = median(rs, Run::stateBytesPerRecord);
                Run mid = rs.get(rs.size() / 2);
                boolean heap = e.getKey().equals("hashmap");
                System.out.printf(Locale.ROOT, "| %s | %,.0f (%s) | %.2f | %.1f | %.2f | %.1f | %.2f | %s | %s | %s |%n",
                        e.getKey(), rate, spread(rs, Run::recordsPerSecond), rate / rocksRate, bytes,
                        bytes / rocksBytes, state, state / rocksState,
                        heap ? "on the heap" : mib(mid.localAt(0.25)) + " / " + mib(mid.localAt(0.5)) + " / "
                                + mib(mid.localAt(0.75)) + " / " + mib(mid.localAt(1.0)),
                        heap ? "-" : mib(mid.maxLocal()), mib(mid.lastCheckpoint()));
            }
            System.out.println();
            chart(runs, job, out.resolve("expiry-" + job + "-state-size.png"));
        }
        System.out.println("CSV and charts in " + out);
    }

    private static double median(List<Run> runs, java.util.function.ToDoubleFunction<Run> f) {
        double[] v = runs.stream().mapToDouble(f).sorted().toArray();
        return v.length == 0 ? Double.NaN : v[v.length / 2];
    }

    private static String spread(List<Run> runs, java.util.function.ToDoubleFunction<Run> f) {
        double[] v = runs.stream().mapToDouble(f).sorted().toArray();
        if (v.length < 2) {
            return "1 run";
        }
        return String.format(Locale.ROOT, "%,.0f-%,.0f", v[0], v[v.length - 1]);
    }

    /** Local state size over time, one line per backend (first round). */
    private static void chart(List<Run> runs, String job, Path png) throws IOException {
        int w = 900;
        int h = 420;
        int left = 80;
        int bottom = 50;
        int top = 40;
        int right = 160;
        BufferedImage img = new BufferedImage(w, h, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = img.createGraphics();
        g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
        g.setColor(Color.WHITE);
        g.fillRect(0, 0, w, h);
        List<Run> first = runs.stream().filter(r -> r.job().equals(job) && r.round() == 1
                && !r.backend().equals("hashmap")).toList();
        long maxT = Math.max(1, first.stream().mapToLong(r -> (long) (r.seconds() * 1000)).max().orElse(1));
        long maxB = Math.max(1, first.stream().mapToLong(Run::maxLocal).max().orElse(1));
        g.setColor(Color.DARK_GRAY);
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13));
        g.drawString("Local state size over time: " + job + " job", left, 24);
        g.drawLine(left, h - bottom, w - right, h - bottom);
        g.drawLine(left, top, left, h - bottom);
        for (int i = 0; i <= 4; i++) {
            int y = h - bottom - i * (h - bottom - top) / 4;
            g.drawString(mib(maxB * i / 4), 4, y + 4);
            int x = left + i * (w - left - right) / 4;
            g.drawString((maxT * i / 4 / 1000) + " s", x - 8, h - bottom + 18);
        }
        Color[] colors = {new Color(0x1f77b4), new Color(0x2ca02c), new Color(0xd62728)};
        int c = 0;
        for (Run r : first) {
            g.setColor(colors[c % colors.length]);
            g.setStroke(new BasicStroke(2f));
            int px = -1;
            int py = -1;
            for (long[] s : r.samples()) {
                int x = left + (int) (s[0] * (w - left - right) / maxT);
                int y = h - bottom - (int) (s[1] * (h - bottom - top) / maxB);
                if (px >= 0) {
                    g.drawLine(px, py, x, y);
                }
                px = x;
                py = y;
            }
            g.drawString(r.backend(), w - right + 10, top + 20 + 18 * c);
            c++;
        }
        g.dispose();
        ImageIO.write(img, "png", png.toFile());
    }
}
