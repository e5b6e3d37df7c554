package io.lethe.bench.suite;

import static io.lethe.bench.suite.Cells.abs;
import static io.lethe.bench.suite.Cells.mib;
import static io.lethe.bench.suite.Cells.ratioCell;
import static io.lethe.bench.suite.Spread.values;

import io.lethe.bench.suite.Csv.Row;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The report's section on Nexmark with asynchronous state: per query every backend's events/s, state
 * size, the requests per batch Lethe's executor was handed, and whether its result equals RocksDB's with
 * synchronous state; the latency of the paced runs; each of Lethe's configurations ({@link
 * LetheConfigurations}) against ForSt's executor and against RocksDB with synchronous state.
 */
final class NexmarkAsyncSection {
    static final String NAME = "nexmark-async";
    static final List<String> BACKENDS = List.of("lethe", "lethe-adaptor", "forst", "rocksdb");
    /** The peer the asynchronous path is judged against, and the synchronous baseline. */
    private static final String EXECUTOR_PEER = "forst";
    private static final String SYNC_PEER = "rocksdb";

    private final Report r;

    private NexmarkAsyncSection(Report r) {
        this.r = r;
    }

    static void write(Report r) throws IOException {
        new NexmarkAsyncSection(r).write();
    }

    private void write() throws IOException {
        List<Row> rows = r.section("Nexmark with asynchronous state", NAME, "The Nexmark queries whose state grows"
                + " with the input, with Flink's asynchronous state (State V2): Lethe and ForSt each on its own"
                + " executor, and, as lethe-adaptor, Lethe through Flink's synchronous adaptor (its default),"
                + " against Flink's RocksDB backend with synchronous state, all on the plan asynchronous"
                + " state needs (no mini-batches, one-phase aggregation). Each result is folded into a multiset of"
                + " rows and compared with RocksDB's.");
        if (rows == null) {
            return;
        }
        List<Row> paced = rows.stream().filter(x -> x.d("paced_events_per_s") > 0).toList();
        rows = rows.stream().filter(x -> !(x.d("paced_events_per_s") > 0)).toList();
        List<String> queries = Csv.distinct(rows, "query", NexmarkSection.QUERIES);
        List<String> backends = Csv.distinct(rows, "backend", BACKENDS);
        perQuery(rows, queries, backends);
        for (String lethe : LetheConfigurations.ALL) {
            if (backends.contains(lethe)) {
                versusPeers(rows, queries, lethe);
            }
        }
        NexmarkSection.bars(r, rows, queries, backends, "events_per_s", 1, "nexmark-async-throughput.png",
                "Nexmark with asynchronous state: events/s (higher is better)", "events/s (median of rounds)");
        if (!paced.isEmpty()) {
            List<String> pacedQueries = Csv.distinct(paced, "query", NexmarkSection.QUERIES);
            latency(paced, pacedQueries, backends);
            for (String lethe : LetheConfigurations.ALL) {
                if (backends.contains(lethe)) {
                    latencyVersusPeers(paced, pacedQueries, lethe);
                }
            }
        }
        r.raw(NAME);
    }

    private void perQuery(List<Row> rows, List<String> queries, List<String> backends) {
        List<String[]> table = new ArrayList<>();
        for (String q : queries) {
            for (String backend : backends) {
                List<Row> sel = Csv.where(rows, "query", q, "backend", backend);
                if (sel.isEmpty()) {
                    continue;
                }
                String state = !sel.get(0).s("async_state").equals("true") ? "synchronous"
                        : "asynchronous, " + (LetheConfigurations.contains(backend)
                            ? LetheConfigurations.path(backend) : "its executor");
                table.add(new String[] {q, backend, state, abs(values(sel, "events_per_s")),
                    mib(values(sel, "local_max_bytes")), mib(values(sel, "max_checkpoint_bytes")),
                    abs(values(sel, "async_requests_per_batch")), NexmarkSection.distinct(sel, "equal_to_rocksdb")});
            }
        }
        r.md().append(Report.table(new String[] {"query", "backend", "state", "events/s", "local state max (MiB)",
            "largest checkpoint (MiB)", "requests per batch (Lethe's executor)", "result equal to RocksDB's"},
                table));
    }

    /** Lethe in configuration {@code lethe} against ForSt's executor and RocksDB's synchronous state. */
    private void versusPeers(List<Row> rows, List<String> queries, String lethe) {
        List<String[]> table = new ArrayList<>();
        String how = LetheConfigurations.label(lethe);
        for (String q : queries) {
            List<Row> runs = Csv.where(rows, "query", q, "backend", lethe);
            Spread forst = ratio(rows, q, runs, EXECUTOR_PEER, "events_per_s", true);
            Spread rocks = ratio(rows, q, runs, SYNC_PEER, "events_per_s", true);
            Spread size = BestPeer.of(runs, Csv.where(rows, "query", q).stream()
                    .filter(x -> !LetheConfigurations.contains(x.s("backend"))).toList(), "max_checkpoint_bytes",
                    false, "backend").ratio();
            table.add(new String[] {q, ratioCell(forst, "round"), Report.verdict(forst, true),
                ratioCell(rocks, "round"), Report.verdict(rocks, true), ratioCell(size, "round"),
                Report.verdict(size, false)});
            boolean drawn = lethe.equals(LetheConfigurations.EXECUTOR);
            r.headline("Nexmark async " + q + how + ": events/s (vs ForSt's executor)", forst, true, "round",
                    drawn ? "Nexmark async " + q : null, Report.verdict(forst, true));
            r.headline("Nexmark async " + q + how + ": events/s (vs RocksDB, synchronous state)", rocks, true,
                    "round", null, Report.verdict(rocks, true));
        }
        r.md().append(LetheConfigurations.who(lethe) + " against ForSt's executor and against RocksDB with"
                + " synchronous state, round by round (the largest checkpoint against the smaller of the two):\n\n")
                .append(Report.table(new String[] {"query", "Lethe / ForSt events/s", "verdict",
                    "Lethe / RocksDB (synchronous) events/s", "verdict", "Lethe / smallest largest checkpoint",
                    "verdict"}, table));
    }

    /** The paced runs: each backend's result latency. */
    private void latency(List<Row> paced, List<String> queries, List<String> backends) {
        List<String[]> table = new ArrayList<>();
        for (String q : queries) {
            for (String backend : backends) {
                List<Row> sel = Csv.where(paced, "query", q, "backend", backend);
                if (!sel.isEmpty()) {
                    table.add(new String[] {q, backend, abs(values(sel, "paced_events_per_s")),
                        abs(values(sel, "latency_p50_us")), abs(values(sel, "latency_p99_us")),
                        abs(values(sel, "async_requests_per_batch")),
                        NexmarkSection.distinct(sel, "equal_to_rocksdb")});
                }
            }
        }
        r.md().append("Latency, with the source paced at a rate every backend keeps up with (a result row's"
                + " latency: from when the newest event it carries was due to leave the source to the row reaching"
                + " the sink):\n\n").append(Report.table(new String[] {"query", "backend", "events/s (paced)",
                    "latency p50 (µs)", "latency p99 (µs)", "requests per batch (Lethe's executor)",
                    "result equal to RocksDB's"}, table));
    }

    /** Lethe's p99 in configuration {@code lethe} against ForSt's and RocksDB's in the paced runs. */
    private void latencyVersusPeers(List<Row> paced, List<String> queries, String lethe) {
        List<String[]> versus = new ArrayList<>();
        String how = LetheConfigurations.label(lethe);
        for (String q : queries) {
            List<Row> runs = Csv.where(paced, "query", q, "backend", lethe);
            Spread forst = ratio(paced, q, runs, EXECUTOR_PEER, "latency_p99_us", false);
            Spread rocks = ratio(paced, q, runs, SYNC_PEER, "latency_p99_us", false);
            versus.add(new String[] {q, ratioCell(forst, "round"), Report.verdict(forst, false),
                ratioCell(rocks, "round"), Report.verdict(rocks, false)});
            r.headline("Nexmark async " + q + how + ": latency p99 (vs ForSt's executor)", forst, false, "round",
                    null, Report.verdict(forst, false));
            r.headline("Nexmark async " + q + how + ": latency p99 (vs RocksDB, synchronous state)", rocks, false,
                    "round", null, Report.verdict(rocks, false));
        }
        r.md().append(LetheConfigurations.who(lethe) + ", latency p99 in the paced runs:\n\n")
                .append(Report.table(new String[] {"query", "Lethe / ForSt latency p99", "verdict",
                    "Lethe / RocksDB (synchronous) latency p99", "verdict"}, versus));
    }

    private static Spread ratio(List<Row> rows, String query, List<Row> lethe, String peer, String column,
            boolean higherBetter) {
        return BestPeer.of(lethe, Csv.where(rows, "query", query, "backend", peer), column, higherBetter, "backend")
                .ratio();
    }
}
