package io.lethe.bench.jobs;

import java.util.List;

/**
 * What a mode of the Nexmark benchmark ({@link NexmarkBench}) runs: its events, rounds, backends and
 * queries; {@code asyncState}: the asynchronous part; {@code pacedRate}: a mode of paced runs (their
 * source at the rate of event time), 0 for unpaced ones.
 */
record NexmarkMode(String name, long events, int rounds, long checkpointSeconds, NexmarkConfig config,
        List<String> backends, List<NexmarkQueries.Query> queries, boolean asyncState, long pacedRate) {
    static final String ASYNC_PROPERTY = "lethe.bench.nexmark.async";
    /**
     * The asynchronous part's backends: Lethe and ForSt with their own executors, Lethe through Flink's
     * synchronous adaptor (lethe-adaptor, its default), and RocksDB with synchronous state.
     */
    static final List<String> ASYNC_BACKENDS = List.of("lethe", "lethe-adaptor", "forst", "rocksdb");
    static final List<String> ASYNC_QUICK_QUERIES = List.of("q4", "q18", "q20");
    /** Regular joins, row-time deduplication and a rank: their state grows with the input. */
    static final List<String> ASYNC_FULL_QUERIES = List.of("q4", "q9", "q18", "q20");

    /** Queries whose result rows carry the event times of their inputs, so that a paced run measures latency. */
    static final List<String> LATENCY_QUERIES = List.of("q9", "q18", "q20");

    NexmarkMode(String name, long events, int rounds, long checkpointSeconds, NexmarkConfig config,
            List<String> backends, List<NexmarkQueries.Query> queries, boolean asyncState) {
        this(name, events, rounds, checkpointSeconds, config, backends, queries, asyncState, 0);
    }

    static NexmarkMode of(boolean full) {
        boolean async = Boolean.getBoolean(ASYNC_PROPERTY);
        List<String> backends = SuiteParts.selected("lethe.bench.nexmark.backends",
                async ? ASYNC_BACKENDS : JobBackends.ALL.stream().filter(b -> !b.equals("lethe-h8")).toList());
        List<String> defaultQueries = !async ? NexmarkQueries.ALL.stream().map(NexmarkQueries.Query::name).toList()
                : full ? ASYNC_FULL_QUERIES : ASYNC_QUICK_QUERIES;
        List<NexmarkQueries.Query> queries = SuiteParts.selected("lethe.bench.nexmark.queries", defaultQueries)
                .stream().map(NexmarkQueries::byName).toList();
        long fullEvents = async ? 3_000_000 : 2_000_000;
        return new NexmarkMode(full ? "full" : "quick",
                Long.getLong("lethe.bench.nexmark.events", full ? fullEvents : 50_000),
                Integer.getInteger("lethe.bench.nexmark.rounds", full && !async ? 2 : 1),
                Long.getLong("lethe.bench.checkpoint-seconds", full ? 10 : 2),
                NexmarkConfig.withRate(Long.getLong("lethe.bench.nexmark.rate", NexmarkConfig.DEFAULT_RATE)),
                backends, queries, async);
    }

    /**
     * Whether {@code backend}'s runs use asynchronous state: in the asynchronous part, Lethe's (on its
     * executor, or through Flink's synchronous adaptor as lethe-adaptor) and ForSt's; the others run the
     * same plan with synchronous state.
     */
    boolean asyncStateOn(String backend) {
        return asyncState && (backend.startsWith("lethe") || backend.equals("forst"));
    }

    /** The backend whose result every other one's must equal. */
    String reference() {
        return asyncState ? "rocksdb" : NexmarkEquality.HASHMAP;
    }

    /** The name of the CSV files it writes. */
    String csvName() {
        return asyncState ? "nexmark-async" : "nexmark";
    }

    /** One round only: each query runs once more on the reference to see whether it repeats. */
    boolean repeatsReference() {
        return rounds < 2 && backends.contains(reference()) && pacedRate == 0;
    }

    /**
     * The asynchronous part's latency runs (null for the other part): the queries of {@link
     * #LATENCY_QUERIES} it runs, paced at a rate every backend keeps up with (full 4,000 events/s for
     * 60 s, quick 2,000 for 3 s; {@code lethe.bench.nexmark.paced-rate} and {@code .paced-seconds}).
     */
    NexmarkMode paced() {
        List<NexmarkQueries.Query> latency = queries.stream().filter(q -> LATENCY_QUERIES.contains(q.name()))
                .toList();
        if (!asyncState || latency.isEmpty()) {
            return null;
        }
        boolean full = name.equals("full");
        long rate = Long.getLong("lethe.bench.nexmark.paced-rate", full ? 4_000 : 2_000);
        long seconds = Long.getLong("lethe.bench.nexmark.paced-seconds", full ? 60 : 3);
        return new NexmarkMode(name, rate * seconds, 1, checkpointSeconds, NexmarkConfig.withRate(rate), backends,
                latency, true, rate);
    }

    int runs() {
        return queries.size() * (rounds * backends.size() + (repeatsReference() ? 1 : 0));
    }
}
