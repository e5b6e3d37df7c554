package io.lethe.bench.suite;

import static io.lethe.bench.suite.Cells.abs;
import static io.lethe.bench.suite.Cells.num;
import static io.lethe.bench.suite.Cells.pct;
import static io.lethe.bench.suite.Cells.pctCell;
import static io.lethe.bench.suite.Cells.ratioCell;
import static io.lethe.bench.suite.Cells.selectivity;
import static io.lethe.bench.suite.Spread.median;
import static io.lethe.bench.suite.Spread.ratio;
import static io.lethe.bench.suite.Spread.ratios;
import static io.lethe.bench.suite.Spread.values;

import io.lethe.bench.suite.Csv.Row;
import java.awt.Color;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.ToDoubleFunction;
import org.knowm.xchart.AnnotationText;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * Writes the benchmark report: reads the CSV files a benchmark run left in a data directory, draws
 * PNG charts next to them and writes a Markdown report that links both, with a summary of where
 * Lethe is ahead of RocksDB and where it is behind.
 *
 * <p>Results come in rounds; within a round the systems ran interleaved. A comparison with RocksDB
 * is always the ratio of the same round (Lethe in round r / RocksDB in round r), reported as the
 * median of the per-round ratios with their min-max; absolute values are medians over the rounds
 * with min-max. A part whose CSV file is missing is reported as not run; the others still are.
 * A hand-written block between {@link #HAND_START} and {@link #HAND_END} in an existing report is
 * kept when the report is regenerated.
 */
public final class Report {
    /** First line of the hand-written block that regeneration keeps. */
    public static final String HAND_START = "<!-- hand-written: kept when the report is regenerated -->";
    /** Last line of the hand-written block that regeneration keeps. */
    public static final String HAND_END = "<!-- end hand-written -->";
    static final String HAND_PLACEHOLDER = "(Reading of the results: written by hand after a full run.)";

    private static final double MIB = Cells.MIB;
    private static final List<String> YCSB_SYSTEMS =
            List.of("lethe", "rocksdb", "rocksdb-ttl", "rocksdb-periodic", "rocksdb-deletion-collector");

    private final Path dataDir;
    private final Path reportDir;
    private final StringBuilder md = new StringBuilder();
    private final List<String[]> summary = new ArrayList<>();
    /** The headlines drawn in the summary chart: a short label, the ratio, whether higher is better. */
    private final List<Glance> glance = new ArrayList<>();

    private record Glance(String label, Spread ratio, boolean higherBetter, String verdict) {
        /** How many times better Lethe is (Lethe / RocksDB, inverted where lower is better). */
        double advantage() {
            return higherBetter ? ratio.median() : 1 / ratio.median();
        }
    }

    /** The Markdown written so far, for a section to append to. */
    StringBuilder md() {
        return md;
    }

    /** Where the CSV files are and the charts go. */
    Path dataDir() {
        return dataDir;
    }

    private Report(Path dataDir, Path reportFile) {
        this.dataDir = dataDir;
        this.reportDir = reportFile.getParent();
    }

    /** Command line: {@code Report dataDir reportFile}; see {@link #write}. */
    public static void main(String[] args) throws IOException {
        System.setProperty("java.awt.headless", "true");
        if (args.length != 2) {
            System.err.println("usage: Report <data directory> <report file>");
            System.exit(2);
        }
        write(Path.of(args[0]), Path.of(args[1]));
        System.out.println("wrote " + args[1]);
    }

    /**
     * Reads the benchmark CSV files in {@code dataDir}, writes the charts there and the Markdown
     * report to {@code reportFile}, keeping the hand-written block of an existing report.
     */
    public static void write(Path dataDir, Path reportFile) throws IOException {
        Path file = reportFile.toAbsolutePath().normalize();
        Report r = new Report(dataDir.toAbsolutePath().normalize(), file);
        Files.createDirectories(r.dataDir);
        Files.createDirectories(r.reportDir);
        String handWritten = handWritten(file);
        r.engine();
        r.ycsb();
        r.secondary();
        JobsSection.write(r);
        LargeStateSection.write(r);
        NexmarkSection.write(r);
        NexmarkAsyncSection.write(r);
        StreamsSection.write(r);
        Files.writeString(file, r.document(handWritten));
    }

    private String document(String handWritten) throws IOException {
        Map<String, String> env = Csv.keyValues(dataDir.resolve("environment.csv"));
        StringBuilder doc = new StringBuilder("# Benchmarks\n\n");
        doc.append(String.format(Locale.ROOT, "Produced by `%s`%s: the benchmarks wrote the CSV files in [%s](%s),"
                + " and the suite's `Report` drew the charts next to them and wrote this page; all but the"
                + " hand-written block is regenerated. Results come in rounds, and within a round the systems ran"
                + " interleaved on the same machine. A comparison with RocksDB is the ratio Lethe / RocksDB within"
                + " each round, shown as the median of the per-round ratios with their min-max in parentheses;"
                + " absolute values are medians over the rounds with min-max.\n\n",
                env.getOrDefault("command", "benchmarks/run.sh"),
                env.containsKey("date") ? " on " + env.get("date") : "", rel(""), rel("")));
        doc.append("## Summary: where Lethe is ahead and where it is behind\n\n");
        if (summary.isEmpty()) {
            doc.append("No comparison with RocksDB: the data directory holds no results.\n\n");
        } else {
            doc.append(table(new String[] {"metric", "Lethe / peer (median, spread)", "better is", "verdict"},
                    summary));
            doc.append("The peer is rocksdbjni for engine operations, its best method of each round for secondary"
                    + " deletes, the best RocksDB variant of each round for YCSB and the best on-disk backend of each round (Flink's RocksDB"
                    + " backend with either timer service, ForSt) for jobs.\n\n");
            doc.append("Verdict: even (within noise) when the median lies within 0.95-1.05 or the spread includes 1;"
                    + " for engine operations also when the engines' JMH confidence intervals overlap in at least half"
                    + " of the rounds.\n\n");
            if (!glance.isEmpty()) {
                Charts.advantages(dataDir.resolve("summary.png"), "Lethe against its peers at a glance (above 1:"
                        + " Lethe better)", glance.stream().map(Glance::label).toList(),
                        glance.stream().map(Glance::advantage).toList(),
                        glance.stream().map(Glance::verdict).toList());
                doc.append(String.format(Locale.ROOT, "![Lethe's advantage over its peers per metric](%s)%n%n",
                        rel("summary.png")));
                doc.append("Lethe's advantage = Lethe / peer where higher is better, peer / Lethe where"
                        + " lower is better (medians of the ratios above; a selection of them).\n\n");
            }
        }
        doc.append(handWritten).append("\n\n");
        doc.append("## Machine, versions and settings\n\n");
        List<String[]> envRows = new ArrayList<>();
        env.forEach((k, v) -> envRows.add(new String[] {k, v}));
        doc.append(envRows.isEmpty() ? "No `environment.csv` in the data directory.\n\n"
                : table(new String[] {"key", "value"}, envRows));
        return doc.append(md).toString();
    }

    /** The hand-written block of an existing report, markers included, or a placeholder block. */
    static String handWritten(Path reportFile) throws IOException {
        if (Files.isRegularFile(reportFile)) {
            List<String> lines = Files.readAllLines(reportFile);
            int start = -1;
            for (int i = 0; i < lines.size(); i++) {
                if (start < 0 && lines.get(i).trim().equals(HAND_START)) {
                    start = i;
                } else if (start >= 0 && lines.get(i).trim().equals(HAND_END)) {
                    return String.join("\n", lines.subList(start, i + 1));
                }
            }
        }
        return HAND_START + "\n" + HAND_PLACEHOLDER + "\n" + HAND_END;
    }

    // ---------------------------------------------------------------- engine operations

    private void engine() throws IOException {
        List<Row> rows = section("Engine operations (JMH)", "engine-ops", "Throughput of single operations on the"
                + " engines themselves (Lethe's engine through JNI and rocksdbjni), measured with JMH.");
        if (rows == null) {
            return;
        }
        // An operation only Lethe ran (its multiGet with a helper thread) has no RocksDB side.
        List<String> ops = Csv.distinct(rows, "operation", List.of()).stream()
                .filter(op -> !Csv.where(rows, "operation", op, "engine", "rocksdb").isEmpty())
                .toList();
        List<String[]> table = new ArrayList<>();
        List<Double> medians = new ArrayList<>();
        for (String op : ops) {
            List<Row> lethe = Csv.where(rows, "operation", op, "engine", "lethe");
            List<Row> rocks = Csv.where(rows, "operation", op, "engine", "rocksdb");
            Spread ratio = ratios(lethe, rocks, "ops_per_s");
            String verdict = intervalsOverlap(lethe, rocks) && ratio != null ? EVEN : verdict(ratio, true);
            table.add(new String[] {"`" + op + "`", abs(values(lethe, "ops_per_s")), abs(values(rocks, "ops_per_s")),
                    ratioCell(ratio, "round"), verdict});
            headline("Engine `" + op + "` ops/s", ratio, true, "round", "engine " + op, verdict);
            medians.add(ratio == null ? Double.NaN : ratio.median());
        }
        md.append(table(new String[] {"operation", "Lethe ops/s", "RocksDB ops/s", "Lethe / RocksDB", "verdict"},
                table));
        Charts.ratioBars(dataDir.resolve("engine-ops.png"),
                "Engine operations: Lethe / RocksDB ops/s (median of per-round ratios)", "operation",
                "Lethe / RocksDB ops/s (1 = equal)", ops, medians);
        chart("Lethe / RocksDB ops/s per engine operation", "engine-ops.png");
        multiGetAgainstGets(rows);
        raw("engine-ops");
    }

    /** The goal for a batched lookup: keys per second against the same engine's single gets. */
    static final double MULTI_GET_GOAL = 2.0;

    /**
     * Each engine's multiGet of 100 keys against its own single gets on one thread, per round, with
     * Lethe's helper thread (a second core) apart.
     */
    private void multiGetAgainstGets(List<Row> rows) {
        String[][] variants = {
            {"Lethe, on the calling thread", "lethe", "multiGet100"},
            {"Lethe, with 1 helper thread (a second core)", "lethe", "multiGet100 / 1 helper thread"},
            {"RocksDB (multiGetAsList)", "rocksdb", "multiGet100"}};
        List<String[]> table = new ArrayList<>();
        for (String[] v : variants) {
            List<Row> batched = Csv.where(rows, "operation", v[2], "engine", v[1]);
            List<Row> single = Csv.where(rows, "operation", "getHit", "engine", v[1]);
            Spread ratio = ratios(batched, single, "ops_per_s");
            if (ratio == null) {
                continue;
            }
            String verdict = ratio.median() >= MULTI_GET_GOAL ? "goal met" : "below the goal";
            table.add(new String[] {v[0], abs(values(batched, "ops_per_s")), abs(values(single, "ops_per_s")),
                ratioCell(ratio, "round"), verdict});
            if (v[1].equals("lethe")) {
                headline("Engine multiGet100 keys/s vs Lethe's own getHit, " + v[0] + " (goal "
                        + MULTI_GET_GOAL + "x)", ratio, true, "round", null, verdict);
            }
        }
        if (table.isEmpty()) {
            return;
        }
        md.append("MultiGet against single gets (one calling thread; goal for Lethe: ").append(MULTI_GET_GOAL)
                .append("x its single gets):\n\n");
        md.append(table(new String[] {"multiGet", "keys/s", "getHit ops/s", "multiGet / getHit", "verdict"},
                table));
    }

    // ---------------------------------------------------------------- delete-heavy YCSB

    private void ycsb() throws IOException {
        List<Row> rows = section("Delete-heavy YCSB-A", "ycsb", "A"
                + " delete-heavy YCSB-A at a fixed rate for 5 D_th: FADE, which compacts every tombstone within the"
                + " delete persistence threshold D_th, against RocksDB with its defaults, with `ttl`, with"
                + " `periodic_compaction_seconds` and with its deletion collector tuned to the delete share.");
        if (rows == null) {
            return;
        }
        List<String> systems = Csv.distinct(rows, "system", YCSB_SYSTEMS);
        List<String> percents = Csv.distinctNumbers(rows, "delete_percent");
        String[] columns = {"space_amp", "write_amp", "lookups_per_s", "ops_per_s", "compactions", "tombstones_end",
            "max_tombstone_age_end_s", "tombstones_over_dth_end", "tombstones_idle", "max_tombstone_age_idle_s",
            "tombstones_over_dth_idle"};
        List<String[]> absolute = new ArrayList<>();
        for (String p : percents) {
            for (String system : systems) {
                List<Row> sel = Csv.where(rows, "delete_percent", p, "system", system);
                if (!sel.isEmpty()) {
                    List<String> cells = new ArrayList<>(List.of(p + " %", system));
                    for (String c : columns) {
                        cells.add(abs(values(sel, c)));
                    }
                    absolute.add(cells.toArray(String[]::new));
                }
            }
        }
        md.append("### Per system\n\n").append(table(new String[] {"deletes", "system", "space amp", "write amp",
            "lookups/s", "ops/s", "compactions", "tombstones at end", "max tombstone age at end (s)",
            "older than D_th at end", "tombstones after idling", "max tombstone age after idling (s)",
            "older than D_th after idling"}, absolute));
        md.append("Tombstone ages: Lethe's are exact (each file's oldest tombstone, all of its tombstones counted at"
                + " that age); RocksDB keeps no write time per entry, so its ages are the write time of each file's"
                + " newest entry, which its tombstones are at least as old as. Both lean against Lethe.\n\n");
        ycsbVersusBest(rows, percents);
        ycsbBars(rows, systems, percents, "space_amp", "ycsb-space-amp.png", "Space amplification (lower is better)");
        ycsbBars(rows, systems, percents, "write_amp", "ycsb-write-amp.png", "Write amplification (lower is better)");
        ycsbBars(rows, systems, percents, "lookups_per_s", "ycsb-lookups.png", "Lookups/s (higher is better)");
        ycsbBars(rows, systems, percents, "compactions", "ycsb-compactions.png", "Compactions (count)");
        tombstoneAges(rows, systems, percents);
        raw("ycsb", "ycsb-tombstone-ages");
    }

    /** Lethe against the best RocksDB variant per metric and round, with the summary's headlines. */
    private void ycsbVersusBest(List<Row> rows, List<String> percents) {
        List<Metric> metrics = List.of(new Metric("space_amp", "space amplification", false),
                new Metric("write_amp", "write amplification", false),
                new Metric("lookups_per_s", "lookups/s", true),
                new Metric("max_tombstone_age_end_s", "max tombstone age at end", false),
                new Metric("tombstones_over_dth_end", "tombstones older than D_th at end", false),
                new Metric("tombstones_over_dth_idle", "tombstones older than D_th after idling", false));
        BestPeerTable table = new BestPeerTable(this, "system", "round");
        for (String p : percents) {
            List<Row> lethe = Csv.where(rows, "delete_percent", p, "system", "lethe");
            List<Row> rocks = Csv.where(rows, "delete_percent", p).stream()
                    .filter(r -> r.s("system").startsWith("rocksdb")).toList();
            for (Metric m : metrics) {
                boolean drawn = p.equals(percents.get(percents.size() - 1)) && !m.column().startsWith("tombstones")
                        && !m.column().startsWith("max_tombstone_age");
                table.add(lethe, rocks, m, "YCSB, " + p + " % deletes: " + m.label() + " (vs best RocksDB variant)",
                        drawn ? "YCSB " + p + " %: " + m.label() : null, p + " %");
            }
        }
        table.write("### Lethe / the best RocksDB variant, per metric and round", "best RocksDB variant",
                "Lethe / best (per-round ratios)", "deletes");
    }

    private void ycsbBars(List<Row> rows, List<String> systems, List<String> percents, String column, String file,
            String title) throws IOException {
        Map<String, List<Double>> series = new LinkedHashMap<>();
        for (String system : systems) {
            series.put(system, percents.stream()
                    .map(p -> median(Csv.where(rows, "delete_percent", p, "system", system), column)).toList());
        }
        Charts.bars(dataDir.resolve(file), title, "deletes (% of operations)", "median of rounds",
                percents.stream().map(p -> p + " %").toList(), series);
        chart(title, file);
    }

    private void tombstoneAges(List<Row> ycsb, List<String> systems, List<String> percents) throws IOException {
        md.append("### Tombstone ages at the end of the run\n\n");
        List<Row> ages = Csv.read(dataDir.resolve("ycsb-tombstone-ages.csv"));
        if (ages == null) {
            md.append("No `ycsb-tombstone-ages.csv` in the data directory: no age distribution.\n\n");
            return;
        }
        int round = ages.stream().mapToInt(Row::round).min().orElse(1);
        md.append(String.format(Locale.ROOT, "Round %d. Every table file that held tombstones at the end of the run"
                + " counts its tombstones at the file's tombstone age (Lethe: its oldest tombstone's; RocksDB: its"
                + " newest entry's, a lower bound); the curves are the number of tombstones in files of that age or"
                + " younger. D_th is the delete persistence threshold.%n%n", round));
        for (String p : percents) {
            List<Row> sel = Csv.where(ages, "round", String.valueOf(round), "delete_percent", p);
            double dth = median(Csv.where(ycsb, "delete_percent", p), "threshold_s");
            double maxAge = sel.stream().mapToDouble(r -> r.d("file_age_s")).max().orElse(0);
            double xMax = Math.max(1, Math.max(maxAge, Double.isNaN(dth) ? 0 : dth) * 1.1);
            XYChart chart = Charts.xy("Tombstone ages, " + p + " % deletes (round " + round + ")",
                    "tombstone age of the file (s)", "tombstones in files this old or younger");
            List<String[]> table = new ArrayList<>();
            double yMax = 1;
            for (int i = 0; i < systems.size(); i++) {
                List<Row> files = new ArrayList<>(Csv.where(sel, "system", systems.get(i)));
                files.sort(Comparator.comparingDouble(r -> r.d("file_age_s")));
                double[] x = new double[2 * files.size() + 2];
                double[] y = new double[x.length];
                double total = 0;
                double older = 0;
                for (int f = 0; f < files.size(); f++) {
                    double age = files.get(f).d("file_age_s");
                    x[2 * f + 1] = age;
                    y[2 * f + 1] = total;
                    total += files.get(f).d("tombstones");
                    x[2 * f + 2] = age;
                    y[2 * f + 2] = total;
                    older += age > dth ? files.get(f).d("tombstones") : 0;
                }
                x[x.length - 1] = xMax;
                y[y.length - 1] = total;
                yMax = Math.max(yMax, total);
                Charts.line(chart, systems.get(i), x, y, Charts.color(systems.get(i), i), false)
                        .setMarker(SeriesMarkers.NONE);
                table.add(new String[] {systems.get(i), num(total), total == 0 ? "-" : pct(older / total)});
            }
            if (!Double.isNaN(dth)) {
                Charts.line(chart, "D_th = " + num(dth) + " s", new double[] {dth, dth},
                        new double[] {0, yMax * 1.05}, Color.BLACK, true);
                chart.addAnnotation(new AnnotationText("D_th", dth + xMax * 0.05, yMax, false));
            }
            chart.getStyler().setXAxisMin(0.0).setXAxisMax(xMax).setYAxisMin(0.0);
            String file = "ycsb-tombstone-age-cdf-" + p + ".png";
            Charts.save(chart, dataDir.resolve(file));
            md.append("#### ").append(p).append(" % deletes\n\n");
            md.append(table(new String[] {"system", "tombstones in files", "share older than D_th"}, table));
            chart("Cumulative tombstones by file age, " + p + " % deletes", file);
        }
    }

    // ---------------------------------------------------------------- secondary range deletes

    private void secondary() throws IOException {
        List<Row> rows = section("Secondary range deletes", "secondary-deletes",
                "Deleting every entry whose secondary attribute falls in a range: Lethe's KiWi layout, whose delete"
                + " tiles of h pages let it drop whole pages, against the ways RocksDB can do it (scan and delete,"
                + " compaction filter, DeleteRange when the attribute is correlated with the key). Bytes are those"
                + " read and written until the data is physically gone. Each round compares Lethe with the best"
                + " RocksDB method of the same round, by bytes and by time separately.");
        if (rows == null) {
            return;
        }
        List<Row> lethe = Csv.where(rows, "system", "lethe");
        List<String> hs = Csv.distinctNumbers(lethe, "h");
        List<String> selectivities = Csv.distinctNumbers(rows, "selectivity");
        List<String> correlations = Csv.distinct(rows, "correlation", List.of("uncorrelated", "correlated"));
        String headlineH = hs.stream().min(Comparator.comparingDouble(h -> Math.abs(log2(Double.parseDouble(h)) - 3)))
                .orElse("8");
        for (String corr : correlations) {
            List<String[]> table = new ArrayList<>();
            List<Double> byteRatios = new ArrayList<>();
            List<Double> timeRatios = new ArrayList<>();
            for (String sel : selectivities) {
                for (String h : hs) {
                    List<Row> runs = Csv.where(lethe, "correlation", corr, "selectivity", sel, "h", h);
                    if (runs.isEmpty()) {
                        continue;
                    }
                    Versus bytes = versus(rows, runs, Report::bytes);
                    Versus time = versus(rows, runs, r -> r.d("millis"));
                    if (h.equals(headlineH)) {
                        byteRatios.addAll(bytes.ratios());
                        timeRatios.addAll(time.ratios());
                    }
                    table.add(new String[] {selectivity(sel), h, abs(values(runs, "millis")),
                        abs(Spread.of(runs.stream().map(r -> bytes(r) / MIB).toList())),
                        abs(values(runs, "pages_dropped")), abs(values(runs, "pages_rewritten")),
                        bytes.rocksDbCell(1 / MIB), pctCell(Spread.of(bytes.ratios())), time.rocksDbCell(1),
                        ratioCell(Spread.of(time.ratios().stream().map(x -> 1 / x).toList()), "round"),
                        abs(values(runs, "lookup_us")), abs(values(runs, "lookup_bytes"))});
                }
            }
            md.append("### ").append(corr).append(" delete keys\n\n").append(table(new String[] {"selectivity", "h",
                "Lethe ms", "Lethe MiB read+written", "pages dropped", "pages rewritten", "best RocksDB MiB (method)",
                "Lethe / RocksDB bytes", "best RocksDB ms (method)", "Lethe speed-up (x)", "lookup µs",
                "lookup bytes"}, table));
            String what = "Secondary range deletes, " + corr + ", h = " + headlineH + ": ";
            headline(what + "bytes read+written vs best RocksDB (over selectivities and rounds)",
                    Spread.of(byteRatios), false, "value", "range delete bytes, " + corr);
            headline(what + "time vs best RocksDB (over selectivities and rounds)", Spread.of(timeRatios), false,
                    "value", "range delete time, " + corr);
            freedOnDisk(rows, corr, selectivities, headlineH);
            bytesByH(rows, lethe, corr, hs, selectivities);
        }
        pagesDropped(lethe, hs, correlations);
        lookupByH(lethe, hs, correlations);
        raw("secondary-deletes");
    }

    /**
     * What left the disk: the blocks the table files allocated before the delete minus after it,
     * per system (Lethe at the headline h), and that as a share of the deleted data's part of the
     * allocated bytes (selectivity x bytes before).
     */
    private void freedOnDisk(List<Row> rows, String corr, List<String> selectivities, String headlineH) {
        List<String[]> table = new ArrayList<>();
        for (String sel : selectivities) {
            List<Row> runs = Csv.where(rows, "correlation", corr, "selectivity", sel);
            for (String system : Csv.distinct(runs, "system", List.of("lethe"))) {
                List<Row> sys = Csv.where(runs, "system", system);
                if (system.equals("lethe")) {
                    sys = Csv.where(sys, "h", headlineH);
                }
                double share = Double.parseDouble(sel);
                Spread freed = Spread.of(sys.stream()
                        .map(r -> (r.d("allocated_before") - r.d("allocated_after")) / MIB).toList());
                Spread ofDeleted = Spread.of(sys.stream().map(r -> (r.d("allocated_before")
                        - r.d("allocated_after")) / (share * r.d("allocated_before"))).toList());
                if (freed != null) {
                    table.add(new String[] {selectivity(sel), system.equals("lethe") ? "lethe (h = " + headlineH + ")"
                        : system, abs(freed), pctCell(ofDeleted)});
                }
            }
        }
        if (!table.isEmpty()) {
            md.append("Freed on disk (" + corr + "): blocks the table files allocated before the delete minus after"
                    + " it, measured with stat on a copy whose files have one link each; 100 % = the deleted entries'"
                    + " share of the bytes before. Compactions write new files, so this is net of what they wrote.\n\n")
                    .append(table(new String[] {"selectivity", "system", "MiB freed", "of the deleted data's bytes"},
                            table));
        }
    }

    /**
     * Lethe's runs of one (correlation, selectivity, h) against the cheapest RocksDB method of the same
     * round by some cost: the per-round ratios Lethe / RocksDB, RocksDB's costs and which methods won.
     */
    private record Versus(List<Double> ratios, List<Double> rocksDbCosts, Set<String> methods) {
        String rocksDbCell(double scale) {
            Spread s = Spread.of(rocksDbCosts);
            return s == null ? "-" : abs(s.scaled(scale)) + " (" + String.join(", ", methods) + ")";
        }
    }

    private static Versus versus(List<Row> rows, List<Row> letheRuns, ToDoubleFunction<Row> cost) {
        List<Double> ratios = new ArrayList<>();
        List<Double> costs = new ArrayList<>();
        Set<String> methods = new TreeSet<>();
        for (Row l : letheRuns) {
            Row best = bestRocksDb(rows, l.s("correlation"), l.s("selectivity"), l.round(), cost);
            if (best != null) {
                ratios.add(ratio(cost.applyAsDouble(l), cost.applyAsDouble(best)));
                costs.add(cost.applyAsDouble(best));
                methods.add(method(best));
            }
        }
        return new Versus(ratios, costs, methods);
    }

    private void bytesByH(List<Row> rows, List<Row> lethe, String corr, List<String> hs, List<String> selectivities)
            throws IOException {
        String file = "secondary-bytes-by-h-" + corr + ".png";
        CategoryChart chart = Charts.categoryLines("Bytes per range delete by tile size h (" + corr + " delete keys)",
                "delete tile size h (pages)", "MiB read+written (log scale)");
        List<Double> plotted = new ArrayList<>();
        for (int i = 0; i < selectivities.size(); i++) {
            String sel = selectivities.get(i);
            List<Double> y = hs.stream().map(h -> {
                Spread s = Spread.of(Csv.where(lethe, "correlation", corr, "selectivity", sel, "h", h).stream()
                        .map(r -> bytes(r) / MIB).toList());
                return s == null ? null : s.median();
            }).toList();
            if (y.stream().allMatch(v -> v == null)) {
                continue;
            }
            Charts.line(chart, "Lethe, " + selectivity(sel), hs, y, Charts.color(i), false);
            y.stream().filter(v -> v != null).forEach(plotted::add);
            Spread best = Spread.of(versus(rows, Csv.where(lethe, "correlation", corr, "selectivity", sel),
                    Report::bytes).rocksDbCosts());
            if (best != null) {
                double b = best.median() / MIB;
                Charts.line(chart, "best RocksDB, " + selectivity(sel), hs, hs.stream().map(h -> b).toList(),
                        Charts.color(i), true);
                plotted.add(b);
            }
        }
        Charts.logDecades(chart.getStyler(), plotted);
        Charts.save(chart, dataDir.resolve(file));
        chart("MiB read and written per range delete by h, " + corr + " delete keys", file);
    }

    private void pagesDropped(List<Row> lethe, List<String> hs, List<String> correlations) throws IOException {
        String corr = correlations.contains("uncorrelated") ? "uncorrelated" : correlations.get(0);
        XYChart chart = Charts.xy("Pages dropped whole per range delete (" + corr + " delete keys)",
                "selectivity (% of entries deleted, log scale)", "pages dropped (median of rounds)");
        boolean positive = true;
        for (int i = 0; i < hs.size(); i++) {
            List<Row> points = Csv.where(lethe, "correlation", corr, "h", hs.get(i));
            List<String> sels = Csv.distinctNumbers(points, "selectivity");
            if (!sels.isEmpty()) {
                Charts.line(chart, "h = " + hs.get(i), sels.stream().mapToDouble(s -> Double.parseDouble(s) * 100)
                        .toArray(), sels.stream().mapToDouble(s -> median(Csv.where(points, "selectivity", s),
                        "pages_dropped")).toArray(), Charts.color(i), false);
                positive &= sels.stream().allMatch(s -> Double.parseDouble(s) > 0);
            }
        }
        chart.getStyler().setXAxisLogarithmic(positive);
        chart.getStyler().setYAxisMin(0.0);
        Charts.save(chart, dataDir.resolve("secondary-pages-dropped.png"));
        chart("Pages dropped whole vs selectivity, per h", "secondary-pages-dropped.png");
    }

    private void lookupByH(List<Row> lethe, List<String> hs, List<String> correlations) throws IOException {
        CategoryChart chart = Charts.categoryLines("Point lookup cost by tile size h",
                "delete tile size h (pages)", "mean lookup µs");
        for (int i = 0; i < correlations.size(); i++) {
            String corr = correlations.get(i);
            List<Double> y = hs.stream().map(h -> Csv.where(lethe, "correlation", corr, "h", h).stream()
                    .mapToDouble(r -> r.d("lookup_us")).filter(v -> !Double.isNaN(v)).average()).map(a -> a.isPresent()
                    ? a.getAsDouble() : null).toList();
            if (y.stream().anyMatch(v -> v != null)) {
                Charts.line(chart, "Lethe, " + corr, hs, y, Charts.color(i), false);
            }
        }
        chart.getStyler().setYAxisMin(0.0);
        Charts.save(chart, dataDir.resolve("secondary-lookup-by-h.png"));
        chart("Mean point lookup µs by h", "secondary-lookup-by-h.png");
    }

    /** The RocksDB method with the least cost at (correlation, selectivity) in one round; null without. */
    private static Row bestRocksDb(List<Row> rows, String corr, String sel, int round, ToDoubleFunction<Row> cost) {
        return Csv.where(rows, "correlation", corr, "selectivity", sel).stream()
                .filter(r -> r.round() == round && !r.s("system").equals("lethe")
                        && !Double.isNaN(cost.applyAsDouble(r)))
                .min(Comparator.comparingDouble(cost)).orElse(null);
    }

    private static double bytes(Row r) {
        return r.d("bytes_read") + r.d("bytes_written");
    }

    private static String method(Row r) {
        return r.s("system").replaceFirst("^rocksdb-", "");
    }


    // ---------------------------------------------------------------- Flink jobs

    // ---------------------------------------------------------------- sections and Markdown

    /**
     * Starts a section: its heading, and either "not run" (returning null) or a description from the
     * settings file and the rounds, returning the rows of {@code name.csv}.
     */
    List<Row> section(String title, String name, String intro) throws IOException {
        md.append("## ").append(title).append("\n\n");
        List<Row> rows = Csv.read(dataDir.resolve(name + ".csv"));
        if (rows == null) {
            md.append("This part was not run: there are no results in `").append(name).append(".csv`.\n\n");
            return null;
        }
        Map<String, String> settings = Csv.keyValues(dataDir.resolve(name + ".settings.csv"));
        md.append(intro);
        if (settings.containsKey("what")) {
            md.append(" Measured: ").append(settings.get("what").replaceAll("\\.$", "")).append('.');
        }
        long rounds = rows.stream().mapToInt(Row::round).distinct().count();
        md.append(rounds == 1 ? " One round.\n\n"
                : " " + rounds + " rounds; within a round the systems ran interleaved.\n\n");
        if (settings.size() > (settings.containsKey("what") ? 1 : 0)) {
            md.append("Settings:\n\n");
            settings.forEach((k, v) -> md.append(k.equals("what") ? "" : "- " + k + ": " + v + "\n"));
            md.append('\n');
        }
        return rows;
    }

    private void headline(String metric, Spread ratio, boolean higherBetter, String unit) {
        headline(metric, ratio, higherBetter, unit, null);
    }

    /** A summary row; with a {@code glanceLabel} the metric is also a point of the summary chart. */
    private void headline(String metric, Spread ratio, boolean higherBetter, String unit, String glanceLabel) {
        headline(metric, ratio, higherBetter, unit, glanceLabel, verdict(ratio, higherBetter));
    }

    void headline(String metric, Spread ratio, boolean higherBetter, String unit, String glanceLabel,
            String verdict) {
        summary.add(new String[] {metric, ratioCell(ratio, unit), higherBetter ? "higher" : "lower", verdict});
        if (glanceLabel != null && ratio != null) {
            glance.add(new Glance(glanceLabel, ratio, higherBetter, verdict));
        }
    }

    private static final String EVEN = "even (within noise)";

    /**
     * Whether the two engines' JMH confidence intervals ({@code ops_per_s} plus or minus {@code
     * score_error}) overlap in at least half of the rounds both ran: their difference is then not
     * shown by the rounds.
     */
    static boolean intervalsOverlap(List<Row> lethe, List<Row> rocks) {
        int rounds = 0;
        int overlapping = 0;
        for (Row a : lethe) {
            for (Row b : rocks) {
                if (a.round() == b.round()) {
                    rounds++;
                    double gap = Math.abs(a.d("ops_per_s") - b.d("ops_per_s"));
                    overlapping += gap <= a.d("score_error") + b.d("score_error") ? 1 : 0;
                }
            }
        }
        return rounds > 0 && 2 * overlapping >= rounds;
    }

    /** "ahead", "behind" or "even (within noise)" for a Lethe / RocksDB ratio; "n/a" without one. */
    static String verdict(Spread ratio, boolean higherBetter) {
        if (ratio == null) {
            return "n/a";
        }
        if ((ratio.median() >= 0.95 && ratio.median() <= 1.05) || (ratio.min() <= 1 && ratio.max() >= 1)) {
            return EVEN;
        }
        return (ratio.median() > 1) == higherBetter ? "ahead" : "behind";
    }

    void chart(String alt, String file) {
        if (Files.isRegularFile(dataDir.resolve(file))) {
            md.append("![").append(alt).append("](").append(rel(file)).append(")\n\n");
        } else {
            md.append("(No data for the chart ").append(file).append(".)\n\n");
        }
    }

    void raw(String... names) {
        List<String> links = new ArrayList<>();
        for (String name : names) {
            for (String file : List.of(name + ".csv", name + ".settings.csv")) {
                if (Files.isRegularFile(dataDir.resolve(file))) {
                    links.add("[" + file + "](" + rel(file) + ")");
                }
            }
        }
        md.append("Raw data: ").append(String.join(", ", links)).append(".\n\n");
    }

    /** {@code file} in the data directory, relative to the report's directory, with '/' separators. */
    private String rel(String file) {
        String path = reportDir.relativize(dataDir.resolve(file)).toString().replace(File.separatorChar, '/');
        return file.isEmpty() ? (path.isEmpty() ? "./" : path + "/") : path;
    }

    static String table(String[] header, List<String[]> rows) {
        StringBuilder t = new StringBuilder("| ").append(String.join(" | ", header)).append(" |\n|");
        t.append(" --- |".repeat(header.length)).append('\n');
        for (String[] row : rows) {
            t.append("| ").append(String.join(" | ", List.of(row).stream().map(c -> c.replace("|", "\\|"))
                    .toList())).append(" |\n");
        }
        return rows.isEmpty() ? "No data.\n\n" : t.append('\n').toString();
    }

    private static double log2(double x) {
        return Math.log(x) / Math.log(2);
    }
}
