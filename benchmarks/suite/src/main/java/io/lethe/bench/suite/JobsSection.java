package io.lethe.bench.suite;

import static io.lethe.bench.suite.Cells.abs;
import static io.lethe.bench.suite.Cells.mib;
import static io.lethe.bench.suite.Spread.median;
import static io.lethe.bench.suite.Spread.values;

import io.lethe.bench.suite.Csv.Row;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * The report's Flink-job section: per job a table of every backend, Lethe against the best on-disk
 * peer per metric (Flink's RocksDB backend with timers in RocksDB or on the heap, ForSt), and charts.
 */
final class JobsSection {
    static final List<String> JOBS = List.of("tumbling", "sliding", "tumbling-paced", "ttl", "timers");
    /** The window jobs, where Lethe is also compared with each RocksDB timer service alone. */
    static final List<String> WINDOW_JOBS = List.of("tumbling", "sliding", "tumbling-paced", "timers");
    static final List<String> ROCKSDB = List.of("rocksdb", "rocksdb-heap-timers");
    static final List<String> BACKENDS = List.of("lethe", "lethe-h8", "rocksdb", "rocksdb-heap-timers", "forst",
            "hashmap");
    static final List<String> PEERS = List.of("rocksdb", "rocksdb-heap-timers", "forst");

    private final Report r;

    private JobsSection(Report r) {
        this.r = r;
    }

    static void write(Report r) throws IOException {
        new JobsSection(r).write();
    }

    /** Microseconds as milliseconds; null stays null. */
    private static Spread millis(Spread micros) {
        return micros == null ? null : micros.scaled(1e-3);
    }

    private static boolean paced(String job) {
        return job.endsWith("-paced") || job.equals("ttl");
    }

    /**
     * A job whose state only grows until its input ends (the timers job): a checkpoint in mid-run
     * holds whatever had arrived when it fell, so its size and duration compare timings, not
     * backends. The equal-work measure is every checkpoint's upload over all records.
     */
    private static boolean growing(String job) {
        return job.equals("timers");
    }

    private void write() throws IOException {
        List<Row> rows = r.section("Flink jobs", "jobs", "Flink jobs whose state expires (tumbling and sliding"
                + " windows, state TTL, a million windows fired by one watermark step), the same input on each state"
                + " backend: Lethe; Flink's RocksDB backend with"
                + " timers in RocksDB and on the heap; ForSt; the heap (HashMap) backend. Unpaced runs measure"
                + " records/s in steady state; paced runs (a fixed rate every backend sustains) measure latency,"
                + " and make the TTL job's work independent of speed. Lethe is judged against the best on-disk peer"
                + " per metric.");
        if (rows == null) {
            return;
        }
        List<String> jobs = Csv.distinct(rows, "job", JOBS);
        List<String> backends = Csv.distinct(rows, "backend", BACKENDS);
        List<Row> samples = Csv.read(r.dataDir().resolve("jobs-state-size.csv"));
        List<Row> checkpoints = Csv.read(r.dataDir().resolve("jobs-checkpoints.csv"));
        for (String job : jobs) {
            r.md().append("### ").append(job).append("\n\n");
            perBackend(rows, job, backends);
            versusBestPeer(rows, job);
            if (WINDOW_JOBS.contains(job)) {
                versusRocksDb(rows, job);
            }
            overTime(samples, job, backends, "local_bytes", false, "local state", "state-size");
            overTime(checkpoints, job, backends, "full_bytes", true, "checkpoint size", "checkpoint-size");
        }
        allJobs(rows, jobs, backends);
        r.raw("jobs", "jobs-state-size", "jobs-checkpoints");
    }

    private void perBackend(List<Row> rows, String job, List<String> backends) {
        boolean paced = paced(job);
        List<String[]> table = new ArrayList<>();
        for (String backend : backends) {
            List<Row> sel = Csv.where(rows, "job", job, "backend", backend);
            if (sel.isEmpty()) {
                continue;
            }
            boolean heap = backend.equals("hashmap");
            List<String> cells = new ArrayList<>(List.of(backend));
            if (paced) {
                cells.add(abs(millis(values(sel, "latency_p50_us"))));
                cells.add(abs(millis(values(sel, "latency_p99_us"))));
            } else {
                cells.add(abs(values(sel, "steady_records_per_s")));
            }
            if (job.equals("timers")) {
                cells.add(abs(values(sel, "fire_ms")));
            }
            cells.addAll(List.of(abs(values(sel, "cpu_us_per_record")), abs(values(sel, "bytes_written_per_record")),
                    abs(values(sel, "state_bytes_written_per_record")),
                    heap ? "heap" : mib(values(sel, "local_max_bytes")),
                    heap ? "heap" : mib(values(sel, "local_end_bytes")), abs(values(sel, "checkpoints")),
                    mib(values(sel, "max_checkpoint_bytes")), mib(values(sel, "final_checkpoint_bytes")),
                    abs(values(sel, "checkpointed_bytes_per_record")), abs(values(sel, "max_checkpoint_ms"))));
            table.add(cells.toArray(String[]::new));
        }
        List<String> header = new ArrayList<>(List.of("backend"));
        header.addAll(paced ? List.of("latency p50 (ms)", "latency p99 (ms)") : List.of("records/s (steady)"));
        if (job.equals("timers")) {
            header.add("watermark step (ms)");
        }
        header.addAll(List.of("CPU µs/record", "bytes written/record", "without checkpoint files",
                "local state max (MiB)", "at end (MiB)", "checkpoints", "largest checkpoint (MiB)",
                "final checkpoint (MiB)", "checkpoint upload/record (bytes)", "longest checkpoint (ms)"));
        r.md().append(Report.table(header.toArray(String[]::new), table));
    }

    private static List<Metric> metrics(String job) {
        List<Metric> metrics = new ArrayList<>(paced(job)
                ? List.of(new Metric("latency_p50_us", "latency p50", false),
                        new Metric("latency_p99_us", "latency p99", false))
                : List.of(new Metric("steady_records_per_s", "records/s", true)));
        if (job.equals("timers")) {
            metrics.add(new Metric("fire_ms", "watermark step", false));
        }
        metrics.addAll(List.of(new Metric("cpu_us_per_record", "CPU per record", false),
                new Metric("bytes_written_per_record", "bytes written per record", false),
                new Metric("local_max_bytes", "max local state", false)));
        metrics.addAll(growing(job)
                ? List.of(new Metric("checkpointed_bytes_per_record", "checkpoint upload per record", false))
                : List.of(new Metric("max_checkpoint_bytes", "largest checkpoint", false),
                        new Metric("max_checkpoint_ms", "longest checkpoint", false)));
        return metrics;
    }

    private void versusBestPeer(List<Row> rows, String job) {
        List<Metric> metrics = metrics(job);
        List<Row> lethe = Csv.where(rows, "job", job, "backend", "lethe");
        List<Row> peers = rows.stream().filter(x -> x.s("job").equals(job) && PEERS.contains(x.s("backend")))
                .toList();
        BestPeerTable table = new BestPeerTable(r, "backend", "round");
        for (Metric m : metrics) {
            boolean drawn = m.column().equals("steady_records_per_s") || m.column().equals("latency_p99_us")
                    || m.column().equals("bytes_written_per_record");
            table.add(lethe, peers, m, "Job `" + job + "`: " + m.label() + " (vs best on-disk peer)",
                    drawn ? job + " job " + m.label() : null);
        }
        table.write("Lethe against the best on-disk peer of each round:", "best peer",
                "Lethe / best (per-round ratios)");
    }

    /**
     * Lethe against each configuration of Flink's RocksDB backend alone (timers in RocksDB, timers on
     * the heap): the window jobs' timers are the difference between them.
     */
    private void versusRocksDb(List<Row> rows, String job) {
        List<Row> lethe = Csv.where(rows, "job", job, "backend", "lethe");
        List<String[]> table = new ArrayList<>();
        for (Metric m : metrics(job)) {
            List<String> cells = new ArrayList<>(List.of(m.label(), m.betterIs()));
            for (String rocks : ROCKSDB) {
                Spread ratio = BestPeer.of(lethe, Csv.where(rows, "job", job, "backend", rocks), m.column(),
                        m.higherBetter(), "backend").ratio();
                cells.add(Cells.ratioCell(ratio, "round"));
                cells.add(Report.verdict(ratio, m.higherBetter()));
            }
            table.add(cells.toArray(String[]::new));
        }
        r.md().append("Lethe (timers in the engine) against each RocksDB configuration alone:\n\n")
                .append(Report.table(new String[] {"metric", "better is", "Lethe / rocksdb (timers in RocksDB)",
                        "verdict", "Lethe / rocksdb-heap-timers", "verdict"}, table));
    }

    private void allJobs(List<Row> rows, List<String> jobs, List<String> backends) throws IOException {
        r.md().append("### All jobs\n\n");
        List<String> unpaced = jobs.stream().filter(j -> !paced(j)).toList();
        List<String> pacedJobs = jobs.stream().filter(JobsSection::paced).toList();
        bars(rows, unpaced, backends, "steady_records_per_s", 1, "jobs-throughput.png",
                "Flink jobs: records/s in steady state (higher is better)", "records/s (median of rounds)");
        bars(rows, pacedJobs, backends, "latency_p99_us", 1e-3, "jobs-latency-p99.png",
                "Paced jobs: latency p99 in ms (lower is better)", "ms (median of rounds)");
        bars(rows, jobs, backends, "bytes_written_per_record", 1, "jobs-bytes-per-record.png",
                "Flink jobs: bytes written per record (lower is better)", "bytes/record (median of rounds)");
    }

    private void bars(List<Row> rows, List<String> jobs, List<String> backends, String column, double scale,
            String file, String title, String axis) throws IOException {
        if (jobs.isEmpty()) {
            return;
        }
        Map<String, List<Double>> series = new LinkedHashMap<>();
        for (String backend : backends) {
            series.put(backend, jobs.stream()
                    .map(j -> median(Csv.where(rows, "job", j, "backend", backend), column) * scale).toList());
        }
        Charts.bars(r.dataDir().resolve(file), title, "job", axis, jobs, series);
        r.chart(title, file);
    }

    /**
     * A chart of a size over time in the runs of {@code job} (first round), one line per backend; the
     * HashMap backend only when {@code withHeap} (its local state is on the heap). Sparse series (a
     * point per checkpoint) get markers, dense ones (samples every 250 ms) none.
     */
    private void overTime(List<Row> samples, String job, List<String> backends, String column, boolean withHeap,
            String what, String fileSuffix) throws IOException {
        List<Row> sel = samples == null ? List.of() : Csv.where(samples, "job", job);
        if (sel.isEmpty()) {
            r.md().append("No ").append(what).append(" data for this job.\n\n");
            return;
        }
        int round = sel.stream().mapToInt(Row::round).min().orElse(1);
        XYChart chart = Charts.xy(job + ": " + what + " over time (round " + round + ")",
                "time since the job started (s)", what + " (MiB)");
        for (int i = 0; i < backends.size(); i++) {
            List<Row> points = Csv.where(sel, "backend", backends.get(i), "round", String.valueOf(round));
            if ((withHeap || !backends.get(i).equals("hashmap")) && !points.isEmpty()) {
                XYSeries series = Charts.line(chart, backends.get(i), points.stream()
                        .mapToDouble(p -> p.d("ms") / 1000).toArray(), points.stream()
                        .mapToDouble(p -> p.d(column) / Cells.MIB).toArray(), Charts.color(backends.get(i), i), false);
                if (points.size() > 40) {
                    series.setMarker(SeriesMarkers.NONE);
                }
            }
        }
        chart.getStyler().setYAxisMin(0.0);
        String file = "jobs-" + job + "-" + fileSuffix + ".png";
        Charts.save(chart, r.dataDir().resolve(file));
        r.chart(what.substring(0, 1).toUpperCase(Locale.ROOT) + what.substring(1) + " over time, " + job, file);
    }
}
