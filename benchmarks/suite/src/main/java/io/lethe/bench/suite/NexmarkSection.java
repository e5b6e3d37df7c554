package io.lethe.bench.suite;

import static io.lethe.bench.suite.Cells.abs;
import static io.lethe.bench.suite.Cells.mib;
import static io.lethe.bench.suite.Cells.ratioCell;
import static io.lethe.bench.suite.Spread.median;
import static io.lethe.bench.suite.Spread.values;

import io.lethe.bench.suite.Csv.Row;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * The report's Nexmark section: per query every backend's events/s, state size and whether its result
 * equals the HashMap backend's; Lethe against the best on-disk peer per query; charts.
 */
final class NexmarkSection {
    static final List<String> QUERIES = List.of("q4", "q5", "q7", "q8", "q9", "q11", "q16", "q18", "q19", "q20");
    static final List<String> BACKENDS = List.of("lethe", "rocksdb", "rocksdb-heap-timers", "forst", "hashmap");
    static final List<String> PEERS = List.of("rocksdb", "rocksdb-heap-timers", "forst");

    private final Report r;

    private NexmarkSection(Report r) {
        this.r = r;
    }

    static void write(Report r) throws IOException {
        new NexmarkSection(r).write();
    }

    private void write() throws IOException {
        List<Row> rows = r.section("Nexmark", "nexmark", "The state-heavy Nexmark queries in Flink SQL on events"
                + " from a generator written to the Nexmark specification, the same bounded input on every backend:"
                + " Lethe; Flink's RocksDB backend with timers in RocksDB and on the heap; ForSt; the HashMap backend."
                + " Each result is folded into a multiset of rows and compared with the HashMap backend's.");
        if (rows == null) {
            return;
        }
        List<String> queries = Csv.distinct(rows, "query", QUERIES);
        List<String> backends = Csv.distinct(rows, "backend", BACKENDS);
        perQuery(rows, queries, backends);
        versusBestPeer(rows, queries);
        bars(r, rows, queries, backends, "events_per_s", 1, "nexmark-throughput.png",
                "Nexmark: events/s (higher is better)", "events/s (median of rounds)");
        bars(r, rows, queries, backends, "max_checkpoint_bytes", 1 / Cells.MIB, "nexmark-state-size.png",
                "Nexmark: largest checkpoint, the state's size (lower is better)", "MiB (median of rounds)");
        r.raw("nexmark");
    }

    private void perQuery(List<Row> rows, List<String> queries, List<String> backends) {
        List<String[]> table = new ArrayList<>();
        for (String q : queries) {
            for (String backend : backends) {
                List<Row> sel = Csv.where(rows, "query", q, "backend", backend);
                if (sel.isEmpty()) {
                    continue;
                }
                boolean heap = backend.equals("hashmap");
                table.add(new String[] {q, backend, abs(values(sel, "events_per_s")),
                    heap ? "heap" : mib(values(sel, "local_max_bytes")), mib(values(sel, "max_checkpoint_bytes")),
                    abs(values(sel, "result_rows")), distinct(sel, "equal_to_hashmap")});
            }
        }
        r.md().append(Report.table(new String[] {"query", "backend", "events/s", "local state max (MiB)",
            "largest checkpoint (MiB)", "result rows", "result equal to HashMap's"}, table));
    }

    /** The distinct values of {@code column} in {@code sel}, sorted, joined by "; ". */
    static String distinct(List<Row> sel, String column) {
        TreeSet<String> values = new TreeSet<>();
        sel.forEach(x -> values.add(x.s(column)));
        return String.join("; ", values);
    }

    private void versusBestPeer(List<Row> rows, List<String> queries) {
        List<String[]> table = new ArrayList<>();
        for (String q : queries) {
            List<Row> lethe = Csv.where(rows, "query", q, "backend", "lethe");
            List<Row> peers = rows.stream().filter(x -> x.s("query").equals(q) && PEERS.contains(x.s("backend")))
                    .toList();
            BestPeer speed = BestPeer.of(lethe, peers, "events_per_s", true, "backend");
            // The state's size from Flink's checkpoint statistics: the local directory, sampled every 250 ms
            // during runs of seconds, misses peaks and counts files a compaction is about to delete.
            BestPeer size = BestPeer.of(lethe, peers, "max_checkpoint_bytes", false, "backend");
            String speedVerdict = Report.verdict(speed.ratio(), true);
            table.add(new String[] {q, String.join(", ", speed.winners()), ratioCell(speed.ratio(), "round"),
                speedVerdict, String.join(", ", size.winners()), ratioCell(size.ratio(), "round"),
                Report.verdict(size.ratio(), false)});
            r.headline("Nexmark " + q + ": events/s (vs best on-disk peer)", speed.ratio(), true, "round",
                    "Nexmark " + q, speedVerdict);
        }
        r.md().append("Lethe against the best on-disk peer of each round:\n\n").append(Report.table(new String[] {
            "query", "fastest peer", "Lethe / best events/s", "verdict", "smallest peer",
            "Lethe / best largest checkpoint", "verdict"}, table));
    }

    /** A bar chart of {@code column} (times {@code scale}) per query and backend, medians of the rounds. */
    static void bars(Report r, List<Row> rows, List<String> queries, List<String> backends, String column,
            double scale, String file, String title, String axis) throws IOException {
        Map<String, List<Double>> series = new LinkedHashMap<>();
        for (String backend : backends) {
            series.put(backend, queries.stream()
                    .map(q -> median(Csv.where(rows, "query", q, "backend", backend), column) * scale).toList());
        }
        Charts.bars(r.dataDir().resolve(file), title, "query", axis, queries, series);
        r.chart(title, file);
    }
}
