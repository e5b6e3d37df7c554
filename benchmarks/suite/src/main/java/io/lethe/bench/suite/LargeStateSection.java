package io.lethe.bench.suite;

import static io.lethe.bench.suite.Cells.abs;
import static io.lethe.bench.suite.Cells.mib;
import static io.lethe.bench.suite.Spread.values;

import io.lethe.bench.suite.Csv.Row;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * The report's large-state section: per job two tables of every backend (speed; checkpoints, restore
 * and memory), Lethe against the best on-disk peer per metric, and charts of the runs over time.
 */
final class LargeStateSection {
    static final List<String> JOBS = List.of("keyed", "keyed-async", "windowed");
    static final List<String> BACKENDS = List.of("lethe", "lethe-adaptor", "rocksdb", "rocksdb-heap-timers",
            "forst");
    static final List<String> PEERS = List.of("rocksdb", "rocksdb-heap-timers", "forst");
    /**
     * Samples are a second apart; charts show their mean over up to this many (fewer in short runs, so
     * that a line keeps at least {@link #MIN_POINTS} points), or the lines are noise.
     */
    private static final int SMOOTHING = 10;
    private static final int MIN_POINTS = 5;

    /**
     * A column the report adds: the size of a backend's last checkpoint taken before it had made as many
     * records as the job's slowest backend made by the end of its steady phase. A faster backend has
     * overwritten more state at the end of the run, and overwritten versions take space until compaction
     * reaches them; this compares the backends after the same work.
     */
    static final String EQUAL_WORK_CHECKPOINT = "checkpoint_bytes_equal_work";

    /** How a run measured its local state ({@code local_bytes_*}); absent in rows that summed file sizes. */
    static final String LOCAL_MEASURE = "local_measure";

    private static final List<Metric> METRICS = List.of(
            new Metric("steady_records_per_s", "records/s, steady", true),
            new Metric("latency_p99_us", "latency p99", false),
            new Metric("bytes_written_per_record", "bytes written per record", false),
            new Metric("local_bytes_end", "local state at the end", false),
            new Metric(SteadyMedians.LOCAL, "local state, steady median", false),
            new Metric("checkpoint_async_ms_p50", "checkpoint async part (median)", false),
            new Metric(SteadyMedians.CHECKPOINT_MS, "checkpoint duration, sync + async (median)", false),
            new Metric(CheckpointsPerRecord.ASYNC, "checkpoint async part per record (steady median)", false),
            new Metric(CheckpointsPerRecord.UPLOAD, "checkpoint upload per record (steady median)", false),
            new Metric("checkpoint_full_bytes", "checkpoint size", false),
            new Metric(SteadyMedians.CHECKPOINT, "checkpoint size, steady median", false),
            new Metric(EQUAL_WORK_CHECKPOINT, "checkpoint size after equal work", false),
            new Metric("restore_checkpoint_ms", "restore from the checkpoint", false),
            new Metric("restore_savepoint_ms", "restore from the canonical savepoint", false),
            new Metric("cold_records_per_s", "records/s, cold page cache", true),
            new Metric("native_max_bytes", "native memory (max)", false));


    /** Drawn over the steady phase alone: the load's rates would flatten them. */
    private static final List<Plot> STEADY_PLOTS = List.of(
            new Plot("records_per_s", 1, "records/s", "throughput"),
            new Plot("latency_p99_us", 1e-3, "latency p99 of each second (ms)", "p99", true));
    /** Drawn over the whole run (load, steady phase, checkpoints, restores and the cold phase). */
    private static final List<Plot> RUN_PLOTS = List.of(
            new Plot("local_bytes", 1 / Cells.MIB, "local state (MiB)", "local"),
            new Plot("rss_bytes", 1 / Cells.MIB, "resident memory (MiB)", "rss"),
            new Plot("container_bytes", 1 / Cells.MIB, "memory of the run's cgroup, page cache included (MiB)",
                    "container"));

    private final Report r;

    private LargeStateSection(Report r) {
        this.r = r;
    }

    static void write(Report r) throws IOException {
        new LargeStateSection(r).write();
    }

    private void write() throws IOException {
        List<Row> rows = r.section("State far larger than memory", "largestate", "A keyed-state job (value and map"
                + " state read back at random), the same job with asynchronous state (Lethe's and ForSt's executors,"
                + " RocksDB and, as lethe-adaptor, Lethe through Flink's synchronous adaptor) and a windowed job"
                + " (every element stored, windows kept past their end)"
                + " with state at least twenty times the managed memory, run for minutes in steady state, then"
                + " restored from their last incremental checkpoint with a cold page cache and from a canonical"
                + " savepoint: Lethe; Flink's RocksDB backend (timers in RocksDB, and on the heap where the job has"
                + " timers); ForSt. Each run in a JVM of its own, limited as a TaskManager container would be (see the"
                + " memory limit below), one round: each ratio is one run against one run. Checkpoint size after"
                + " equal work: each backend's last checkpoint taken before it had made as many records as the job's"
                + " slowest backend made in its load and steady phases (a faster backend has overwritten more state by"
                + " the end of the run, and overwritten versions take space until compaction reaches them). Steady"
                + " medians: the median full size of the checkpoints taken in the steady phase, and of the local state"
                + " sampled in it: files and checkpoints swing with each backend's compaction cycle, so a size at one"
                + " moment (the last checkpoint, the end) lands at a random point of that cycle. Checkpoint duration:"
                + " the median over the steady phase's checkpoints of their synchronous part (which holds the task)"
                + " and asynchronous part together, as Flink reports a checkpoint's duration; the backends split"
                + " the work between the two differently. Per record: each steady-phase checkpoint's asynchronous"
                + " part and upload divided by the records made since the checkpoint before, as medians; the jobs"
                + " are not paced, so in the same checkpoint interval a faster backend has more changes to write"
                + " and upload, and a checkpoint's duration is compared at each backend's own speed. Of them"
                + " linking a flush: Lethe's steady checkpoints whose copy of the memtables would have been flushed"
                + " soon after, so they switched the memtables to files as they began and uploaded the flushed"
                + " files instead of a copy (the peers flush at every checkpoint, in its synchronous part).");
        if (rows == null) {
            return;
        }
        List<Row> timeline = Csv.read(r.dataDir().resolve("largestate-timeline.csv"));
        List<Row> checkpoints = Csv.read(r.dataDir().resolve("largestate-checkpoints.csv"));
        rows = EqualWork.addCheckpointColumn(rows, timeline, checkpoints, EQUAL_WORK_CHECKPOINT);
        rows = SteadyMedians.addColumns(rows, timeline, checkpoints);
        rows = CheckpointsPerRecord.addColumns(rows, timeline, checkpoints);
        for (String job : Csv.distinct(rows, "job", JOBS)) {
            List<String> backends = Csv.distinct(Csv.where(rows, "job", job), "backend", BACKENDS);
            r.md().append("### ").append(job).append("\n\n");
            r.md().append(runs(rows, job, backends)).append("\n\n");
            speed(rows, job, backends);
            durability(rows, job, backends);
            lethesFlushes(rows, job, backends);
            for (String lethe : backends) {
                if (LetheConfigurations.contains(lethe)) {
                    versusBestPeer(rows, job, lethe);
                }
            }
            localStateNotCompared(rows, job);
            for (Plot plot : STEADY_PLOTS) {
                overTime(timeline, job, backends, plot, "steady");
            }
            for (Plot plot : RUN_PLOTS) {
                overTime(timeline, job, backends, plot, null);
            }
        }
        r.raw("largestate", "largestate-timeline", "largestate-checkpoints");
    }

    /** When each backend's run started, on which code and for how long it ran steady: one round may mix days. */
    static String runs(List<Row> rows, String job, List<String> backends) {
        List<String> runs = new ArrayList<>();
        for (String backend : backends) {
            for (Row row : Csv.where(rows, "job", job, "backend", backend)) {
                String when = row.s("started_utc").isEmpty() ? "start and code not recorded"
                        : "started " + row.s("started_utc") + " UTC on " + row.s("code");
                runs.add(String.format(Locale.ROOT, "%s %s, steady %.0f s", backend, when, row.d("steady_seconds")));
            }
        }
        return "Runs: " + String.join("; ", runs) + ".";
    }

    private void speed(List<Row> rows, String job, List<String> backends) {
        List<String[]> table = new ArrayList<>();
        for (String backend : backends) {
            List<Row> sel = Csv.where(rows, "job", job, "backend", backend);
            table.add(new String[] {backend, mib(values(sel, "logical_state_bytes")),
                abs(values(sel, "load_records_per_s")), abs(values(sel, "steady_records_per_s")),
                abs(values(sel, "latency_p50_us")), abs(values(sel, "latency_p99_us")),
                abs(values(sel, "cpu_us_per_record")), abs(values(sel, "bytes_written_per_record")),
                mib(values(sel, "local_bytes_end")) + (mixedMeasures(rows, job) && !sel.isEmpty()
                        ? " (" + localMeasure(sel.get(0)) + ")" : ""), mib(values(sel, SteadyMedians.LOCAL)),
                abs(values(sel, "cold_records_per_s")),
                abs(values(sel, "cold_latency_p99_us")), job.startsWith("keyed")
                        ? abs(values(sel, "lookups_missing_state")) + " / " + abs(values(sel, "cold_lookups_missing_state"))
                        : abs(values(sel, "windows_fired")), abs(values(sel, "async_requests_per_batch"))});
        }
        r.md().append(Report.table(new String[] {"backend", "logical state (MiB)", "load records/s",
            "steady records/s", "latency p50 (µs)", "latency p99 (µs)", "CPU µs/record", "bytes written/record",
            "local state (MiB)", "local state, steady median (MiB)", "cold records/s", "cold p99 (µs)",
            job.startsWith("keyed") ? "lookups that missed their state (steady / cold)" : "windows fired",
            "requests per batch (Lethe's executor)"}, table));
    }

    private void durability(List<Row> rows, String job, List<String> backends) {
        List<String[]> table = new ArrayList<>();
        for (String backend : backends) {
            List<Row> sel = Csv.where(rows, "job", job, "backend", backend);
            table.add(new String[] {backend, abs(values(sel, "checkpoints")), abs(values(sel, "checkpoint_flushes")),
                abs(values(sel, "checkpoint_sync_ms_p50")), abs(values(sel, "checkpoint_sync_ms_max")),
                abs(values(sel, "checkpoint_async_ms_p50")), abs(values(sel, "checkpoint_async_ms_max")),
                mib(values(sel, "checkpoint_full_bytes")), mib(values(sel, SteadyMedians.CHECKPOINT)),
                mib(values(sel, EQUAL_WORK_CHECKPOINT)),
                mib(values(sel, "checkpointed_bytes_p50")), abs(values(sel, CheckpointsPerRecord.ASYNC)),
                abs(values(sel, CheckpointsPerRecord.UPLOAD)),
                savepoint(sel, abs(values(sel, "savepoint_ms"))), savepoint(sel, mib(values(sel, "savepoint_bytes"))),
                abs(values(sel, "restore_checkpoint_ms")), savepoint(sel, abs(values(sel, "restore_savepoint_ms"))),
                mib(values(sel, "rss_max_bytes")), mib(values(sel, "native_max_bytes")),
                mib(values(sel, "managed_memory_bytes")), mib(values(sel, "container_max_bytes")),
                mib(values(sel, "container_limit_bytes")), sel.isEmpty() ? "" : sel.get(0).s("cold_cache")});
        }
        r.md().append(Report.table(new String[] {"backend", "checkpoints (steady)",
            "of them linking a flush (Lethe)", "sync ms p50", "sync ms max",
            "async ms p50", "async ms max", "checkpoint size (MiB)", "checkpoint size, steady median (MiB)",
            "checkpoint after equal work (MiB)",
            "uploaded p50 (MiB)", "async µs per record", "uploaded bytes per record", "savepoint ms",
            "savepoint (MiB)", "restore from checkpoint (ms)", "restore from savepoint (ms)", "RSS max (MiB)",
            "native max (MiB)", "managed memory (MiB)", "container max (MiB)", "container limit (MiB)",
            "page cache before restore"}, table));
    }

    /**
     * Lethe's flushes and heap trims in the steady phase, as means per flush and per trim, and how long its
     * compactions paused for flushes someone waited for, in all; left out for rows written before the
     * benchmark counted them.
     */
    private void lethesFlushes(List<Row> rows, String job, List<String> backends) {
        List<String[]> table = new ArrayList<>();
        for (String backend : backends) {
            List<Row> sel = Csv.where(rows, "job", job, "backend", backend);
            if (LetheConfigurations.contains(backend) && values(sel, "flushes") != null) {
                table.add(new String[] {backend, abs(values(sel, "flushes")), abs(values(sel, "flush_mb_mean")),
                    abs(values(sel, "flush_ms_mean")), abs(values(sel, "flush_delay_ms_mean")),
                    abs(values(sel, "checkpoint_flushes")), abs(values(sel, "checkpoint_flush_wait_ms_mean")),
                    abs(values(sel, "heap_trims")), abs(values(sel, "heap_trim_ms_mean")),
                    abs(values(sel, "compaction_give_way_ms"))});
            }
        }
        if (!table.isEmpty()) {
            r.md().append("Lethe's flushes and heap trims in the steady phase:\n\n").append(Report.table(
                    new String[] {"backend", "flushes", "MB written per flush (mean)", "ms per flush (mean)",
                        "ms a switched memtable waited for the flush thread (mean)", "checkpoints linking a flush",
                        "ms such a checkpoint waited for its flush (mean)", "heap trims", "ms per trim (mean)",
                        "ms compactions paused for awaited flushes (in all)"},
                    table));
        }
    }

    /** A savepoint cell, or why there is none. */
    private static String savepoint(List<Row> sel, String cell) {
        return sel.isEmpty() || sel.get(0).s("savepoint").equals("canonical") ? cell : sel.get(0).s("savepoint");
    }

    /** Lethe in configuration {@code backend} (one of {@link LetheConfigurations}) against the best peer. */
    private void versusBestPeer(List<Row> rows, String job, String backend) {
        List<Row> lethe = Csv.where(rows, "job", job, "backend", backend);
        String how = LetheConfigurations.label(backend);
        List<Row> peers = rows.stream().filter(x -> x.s("job").equals(job) && PEERS.contains(x.s("backend")))
                .toList();
        BestPeerTable table = new BestPeerTable(r, "backend", "run");
        for (Metric m : METRICS) {
            List<Row> against = peers;
            if (m.column().startsWith("local_bytes") && !lethe.isEmpty()) {
                // Local state measured one way is never judged against local state measured another.
                against = peers.stream().filter(p -> localMeasure(p).equals(localMeasure(lethe.get(0)))).toList();
                if (against.isEmpty()) {
                    continue;
                }
            }
            boolean drawn = backend.equals(LetheConfigurations.EXECUTOR)
                    && (m.column().equals("steady_records_per_s") || m.column().equals("latency_p99_us"));
            table.add(lethe, against, m, "Large state `" + job + "`" + how + ": " + m.label()
                    + " (vs best on-disk peer)", drawn ? "large " + job + " " + m.label() : null);
        }
        table.write("Lethe" + how + " against the best on-disk peer:", "best peer", "Lethe / best");
    }

    /** Says why local state is not judged where the job's runs measured it in different ways. */
    private void localStateNotCompared(List<Row> rows, String job) {
        if (mixedMeasures(rows, job)) {
            r.md().append("Local state is not compared: ").append(measuredBy(rows, job))
                    .append(". Summed sizes count a checkpoint's hard-linked local snapshot a second time and"
                            + " punched holes as data.\n\n");
        }
    }

    /** How a row measured its local state; rows written before the column summed the files' sizes. */
    static String localMeasure(Row row) {
        String m = row.s(LOCAL_MEASURE);
        return m.isEmpty() ? "file sizes summed" : m;
    }

    private static boolean mixedMeasures(List<Row> rows, String job) {
        return Csv.where(rows, "job", job).stream().map(LargeStateSection::localMeasure).distinct().count() > 1;
    }

    /** Which backend's local state was measured how, e.g. "lethe: disk blocks in use; forst: file sizes summed". */
    private static String measuredBy(List<Row> rows, String job) {
        Map<String, String> by = new TreeMap<>();
        for (Row row : Csv.where(rows, "job", job)) {
            by.put(row.s("backend"), localMeasure(row));
        }
        return by.entrySet().stream().map(e -> e.getKey() + ": " + e.getValue()).collect(Collectors.joining("; "));
    }

    /**
     * A column of the timeline over time, one line per backend, each point the mean of a few samples: over
     * the whole run, or over one {@code phase} from its start.
     */
    private void overTime(List<Row> timeline, String job, List<String> backends, Plot plot, String phase)
            throws IOException {
        List<Row> sel = timeline == null ? List.of() : Csv.where(timeline, "job", job);
        if (phase != null) {
            sel = Csv.where(sel, "phase", phase);
        }
        String what = plot.what();
        if (sel.isEmpty()) {
            r.md().append("No timeline of ").append(what).append(" for this job.\n\n");
            return;
        }
        String during = phase == null ? "over the run" : "in the " + phase + " phase";
        XYChart chart = Charts.xy(job + ": " + what + " " + during,
                phase == null ? "time since the run started (s)" : "time since the " + phase + " phase began (s)",
                plot.logScale() ? what + ", log scale" : what);
        int drawn = 0;
        List<Double> plotted = new ArrayList<>();
        for (int i = 0; i < backends.size(); i++) {
            List<Row> points = Csv.where(sel, "backend", backends.get(i)).stream()
                    .filter(p -> !Double.isNaN(p.d(plot.column()))).toList();
            if (points.size() < MIN_POINTS) {
                continue;
            }
            double start = phase == null ? 0 : points.get(0).d("seconds");
            int mean = Math.max(1, Math.min(SMOOTHING, points.size() / MIN_POINTS));
            int n = points.size() / mean;
            double[] x = new double[n];
            double[] y = new double[n];
            for (int k = 0; k < n; k++) {
                List<Row> group = points.subList(k * mean, (k + 1) * mean);
                x[k] = group.stream().mapToDouble(p -> p.d("seconds") - start).average().orElse(0);
                y[k] = group.stream().mapToDouble(p -> p.d(plot.column()) * plot.scale()).average().orElse(0);
            }
            for (double v : y) {
                plotted.add(v);
            }
            XYSeries series = Charts.line(chart, backends.get(i), x, y, Charts.color(backends.get(i), i), false);
            series.setMarker(SeriesMarkers.NONE);
            drawn++;
        }
        if (drawn == 0) {
            r.md().append("Too few samples of ").append(what).append(" for a chart.\n\n");
            return;
        }
        if (plot.logScale()) {
            Charts.logDecades(chart.getStyler(), plotted);
        } else {
            chart.getStyler().setYAxisMin(0.0);
        }
        String file = "largestate-" + job + "-" + plot.fileSuffix() + ".png";
        Charts.save(chart, r.dataDir().resolve(file));
        r.chart(what + " " + during + ", " + job, file);
    }
}
