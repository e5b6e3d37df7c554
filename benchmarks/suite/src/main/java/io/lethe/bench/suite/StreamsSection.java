package io.lethe.bench.suite;

import static io.lethe.bench.suite.Cells.abs;
import static io.lethe.bench.suite.Cells.mib;
import static io.lethe.bench.suite.Spread.values;

import io.lethe.bench.suite.Csv.Row;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * The report's Kafka Streams section: a windowed aggregation on Lethe's stores and on Kafka Streams'
 * RocksDB stores (as shipped, tuned with LZ4, tuned with ZSTD): a table of every system, Lethe against
 * the best peer per metric, and the state directory's size and the age of expired windows still on disk
 * over time.
 */
final class StreamsSection {
    static final List<String> SYSTEMS = List.of("lethe", "rocksdb", "rocksdb-tuned", "rocksdb-zstd");
    static final List<String> PEERS = List.of("rocksdb", "rocksdb-tuned", "rocksdb-zstd");

    private static final List<Metric> METRICS = List.of(
            new Metric("records_per_s", "records/s", true),
            new Metric("cpu_us_per_record", "CPU of the application per record", false),
            new Metric(StreamsSection.LIVE_DISK, "state directory on disk, live", false),
            new Metric("disk_bytes_main_end", "state directory on disk, end of the fast input", false),
            new Metric("open_files_max", "open files in the state directory, max", false),
            new Metric("native_per_task_bytes", "memory beyond the JVM's per task, max", false),
            new Metric(StreamsSection.LIVE_LAG, "expired windows still on disk, live (max)", false));

    /**
     * Columns the report adds from the timeline, over the second half of the drain, once the backlog of
     * the fast main input has gone and stream time moves with the wall clock, as in a live application:
     * the longest an expired window stayed on disk, and the state directory's mean size.
     */
    static final String LIVE_LAG = "expired_on_disk_live_max_s";
    static final String LIVE_DISK = "disk_bytes_live";

    private static final List<Plot> PLOTS = List.of(
            new Plot("disk_bytes", 1 / Cells.MIB, "state directory on disk (MiB)", "disk"),
            new Plot("expired_on_disk_s", 1, "age of the oldest expired window still on disk (s of stream time)",
                    "expired"));

    private final Report r;

    private StreamsSection(Report r) {
        this.r = r;
    }

    static void write(Report r) throws IOException {
        new StreamsSection(r).write();
    }

    private void write() throws IOException {
        List<Row> rows = r.section("Kafka Streams", "streams", "A windowed aggregation in Kafka Streams (clicks per"
                + " user in tumbling windows kept for a retention period, every update written to an output topic) on"
                + " Lethe's stores and on Kafka Streams' RocksDB stores, as shipped and tuned as Kafka's documentation"
                + " bounds their memory (with LZ4, and with ZSTD as Lethe's window stores compress), each application"
                + " in a JVM of its own against one broker. Each run reads the"
                + " same main topic as fast as it goes, then a drain topic filled with a few clicks a second in real"
                + " time, so that windows expire as in a live application: how long the bytes of an expired window"
                + " stay on disk is the age of the oldest window on disk (Lethe: the smallest delete key left in its"
                + " files; RocksDB: its oldest segment) past the retention boundary. A RocksDB window store drops"
                + " a whole segment at once, so its expired windows stay for up to a segment interval. CPU of the"
                + " application: the application process's CPU time over the main topic per click (stream threads,"
                + " Kafka clients, the stores and their own threads; the broker runs in another process).");
        if (rows == null) {
            return;
        }
        List<Row> timeline = Csv.read(r.dataDir().resolve("streams-timeline.csv"));
        rows = withLiveColumns(rows, timeline);
        List<String> systems = Csv.distinct(rows, "system", SYSTEMS);
        perSystem(rows, systems);
        versusBestPeer(rows);
        for (Plot plot : PLOTS) {
            overTime(timeline, systems, plot);
        }
        r.raw("streams", "streams-timeline");
    }

    private void perSystem(List<Row> rows, List<String> systems) {
        List<String[]> table = new ArrayList<>();
        String reference = fingerprints(Csv.where(rows, "system", "rocksdb"));
        for (String system : systems) {
            List<Row> sel = Csv.where(rows, "system", system);
            table.add(new String[] {system, abs(values(sel, "records_per_s")), abs(values(sel, "cpu_us_per_record")),
                mib(values(sel, LIVE_DISK)),
                mib(values(sel, "disk_bytes_main_end")), mib(values(sel, "disk_bytes_max")),
                abs(values(sel, "open_files_max")),
                mib(values(sel, "native_max_bytes")), mib(values(sel, "native_per_task_bytes")),
                abs(values(sel, "expired_on_disk_main_max_s")), abs(values(sel, LIVE_LAG)),
                abs(values(sel, "output_keys_checked")),
                fingerprints(sel).equals(reference) ? "yes" : "NO (" + fingerprints(sel) + ")"});
        }
        r.md().append(Report.table(new String[] {"system", "records/s", "CPU µs/record (application)",
            "disk, live (MiB)",
            "disk, end of fast input (MiB)", "disk max (MiB)", "open files max",
            "memory beyond the JVM's, max (MiB)", "per task (MiB)",
            "expired on disk, fast input (s of stream time)", "expired on disk, live (s)", "windows checked",
            "counts equal to RocksDB's"}, table));
    }

    /** Each row with {@link #LIVE_LAG} and {@link #LIVE_DISK} from its run's drain samples, if any. */
    private static List<Row> withLiveColumns(List<Row> rows, List<Row> timeline) {
        List<Row> out = new ArrayList<>();
        for (Row row : rows) {
            List<Row> drain = timeline == null ? List.of()
                    : Csv.where(timeline, "system", row.s("system"), "round", row.s("round"), "phase", "drain");
            Map<String, String> cells = new LinkedHashMap<>(row.cells());
            if (!drain.isEmpty()) {
                double from = (drain.get(0).d("elapsed_s") + drain.get(drain.size() - 1).d("elapsed_s")) / 2;
                List<Row> live = drain.stream().filter(x -> x.d("elapsed_s") >= from).toList();
                cells.put(LIVE_LAG, Double.toString(live.stream().mapToDouble(x -> x.d("expired_on_disk_s")).max()
                        .orElse(Double.NaN)));
                cells.put(LIVE_DISK, Double.toString(live.stream().mapToDouble(x -> x.d("disk_bytes")).average()
                        .orElse(Double.NaN)));
            }
            out.add(new Row(cells));
        }
        return out;
    }

    private static String fingerprints(List<Row> sel) {
        TreeSet<String> f = new TreeSet<>();
        sel.forEach(x -> f.add(x.s("output_fingerprint")));
        return String.join(" ", f);
    }

    private void versusBestPeer(List<Row> rows) {
        List<Row> lethe = Csv.where(rows, "system", "lethe");
        List<Row> peers = rows.stream().filter(x -> PEERS.contains(x.s("system"))).toList();
        BestPeerTable table = new BestPeerTable(r, "system", "round");
        for (Metric m : METRICS) {
            boolean drawn = m.column().equals("records_per_s") || m.column().equals(LIVE_DISK);
            table.add(lethe, peers, m, "Kafka Streams: " + m.label() + " (vs best RocksDB store)",
                    drawn ? "Kafka Streams " + m.label() : null);
        }
        table.write("Lethe against the best RocksDB configuration of each round:", "best peer", "Lethe / best");
    }

    /** A column of the timeline over the first round's runs, one line per system. */
    private void overTime(List<Row> timeline, List<String> systems, Plot plot) throws IOException {
        List<Row> sel = timeline == null ? List.of() : Csv.where(timeline, "round", "1");
        XYChart chart = Charts.xy("Kafka Streams: " + plot.what(), "time since the run started (s)", plot.what());
        int drawn = 0;
        for (int i = 0; i < systems.size(); i++) {
            List<Row> points = Csv.where(sel, "system", systems.get(i));
            if (points.size() < 2) {
                continue;
            }
            double[] x = points.stream().mapToDouble(p -> p.d("elapsed_s")).toArray();
            double[] y = points.stream().mapToDouble(p -> p.d(plot.column()) * plot.scale()).toArray();
            XYSeries series = Charts.line(chart, systems.get(i), x, y, Charts.color(systems.get(i), i), false);
            series.setMarker(SeriesMarkers.NONE);
            drawn++;
        }
        if (drawn == 0) {
            r.md().append("No timeline of ").append(plot.what()).append(".\n\n");
            return;
        }
        chart.getStyler().setYAxisMin(0.0);
        String file = "streams-" + plot.fileSuffix() + ".png";
        Charts.save(chart, r.dataDir().resolve(file));
        r.chart(plot.what() + " over the run (round 1)", file);
    }
}
