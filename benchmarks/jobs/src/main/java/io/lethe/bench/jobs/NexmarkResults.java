package io.lethe.bench.jobs;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** Writes the Nexmark benchmark's CSV files and settings, and prints its summary. */
final class NexmarkResults {
    /**
     * Runs with 20 times the events hold 20 times the state and go slower than the quick mode's rates
     * predict: four runs of 3 M events (q9 and q20 on HashMap and Lethe) took 1.2 to 1.9 times (1.5 on
     * average) what those rates predicted.
     */
    private static final double FULL_SLOWDOWN = 1.5;

    private NexmarkResults() {}

    /** Writes the runs of a mode and of its paced runs (null: none) into one CSV file, and its settings. */
    static void write(NexmarkBench.Measured unpaced, NexmarkBench.Measured paced, Path out) throws IOException {
        NexmarkMode mode = unpaced.mode();
        Path file = out.resolve(mode.csvName() + ".csv");
        Path settings = out.resolve(mode.csvName() + ".settings.csv");
        String reference = mode.reference();
        try (PrintWriter csv = new PrintWriter(Files.newBufferedWriter(file))) {
            csv.println("query,backend,round,events,seconds,events_per_s,job_events_per_s,local_max_bytes,"
                    + "checkpoints,max_checkpoint_bytes,final_checkpoint_bytes,result_rows,result_changes,"
                    + "result_sha256,equal_to_" + reference + "," + reference + "_repeatable,async_requests_per_batch,"
                    + "async_state,paced_events_per_s,latency_p50_us,latency_p99_us");
            for (NexmarkBench.Measured m : paced == null ? List.of(unpaced) : List.of(unpaced, paced)) {
                for (NexmarkRun r : m.runs()) {
                    csv.println(row(r, m));
                }
            }
        }
        writeSettings(settings, mode, unpaced.determinism(), paced);
        System.out.println("wrote " + file + " and " + settings);
    }

    private static String row(NexmarkRun r, NexmarkBench.Measured m) {
        boolean ok = r.error() == null;
        return String.format(Locale.ROOT, "%s,%s,%d,%d,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%d,%s,%s", r.query(),
                r.backend(), r.round(), r.events(), ok ? cell(r.seconds(), "%.3f") : "",
                ok ? cell(r.steadyEventsPerSecond(), "%.0f") : "", ok ? cell(r.eventsPerSecond(), "%.0f") : "",
                ok ? r.maxLocal() : "", ok ? r.checkpoints().size() : "", ok ? r.maxCheckpoint() : "",
                ok && r.finalCheckpoint() >= 0 ? r.finalCheckpoint() : "", ok ? r.result().rows() : "",
                ok ? r.changes() : "", ok ? r.result().sha256() : "", text(m.outcome().verdict(r)),
                m.outcome().repeatable().get(r.query()), ok ? cell(r.requestsPerBatch(), "%.1f") : "",
                m.mode().asyncStateOn(r.backend()), r.pacedRate(), ok ? cell(r.latencyP50Micros(), "%.0f") : "",
                ok ? cell(r.latencyP99Micros(), "%.0f") : "");
    }

    /** Per query: whether the backends agreed; then the bug signals, loudly, and the time taken. */
    static void summarize(NexmarkBench.Measured unpaced, NexmarkBench.Measured paced, double seconds) {
        summarize(unpaced);
        if (paced != null) {
            System.out.println();
            System.out.print("Paced runs. ");
            summarize(paced);
        }
        NexmarkMode mode = unpaced.mode();
        System.out.printf(Locale.ROOT, "%nNexmark %s mode took %.0f s%n", mode.name(), seconds);
        if (mode.name().equals("quick") && !mode.asyncState()) {
            System.out.printf(Locale.ROOT, "Full mode estimate: about %.0f min (%,d events per run, %d rounds: this"
                    + " run's rates, %.1f times slower with the larger state)%n",
                    estimateFullSeconds(unpaced.runs(), mode, seconds) / 60, NexmarkMode.of(true).events(),
                    NexmarkMode.of(true).rounds(), FULL_SLOWDOWN);
        }
    }

    private static void summarize(NexmarkBench.Measured m) {
        NexmarkMode mode = m.mode();
        NexmarkEquality.Outcome outcome = m.outcome();
        System.out.println("Results equal to " + mode.reference() + "'s:");
        for (NexmarkQueries.Query q : mode.queries()) {
            List<NexmarkRun> mine = m.runs().stream().filter(r -> r.query().equals(q.name())).toList();
            long equal = mine.stream().filter(r -> outcome.verdict(r).equals("yes")).count();
            long compared = mine.stream().filter(r -> !r.backend().equals(mode.reference())).count();
            String why = outcome.nondeterministic().get(q.name());
            String verdict = why == null ? String.format("%d of %d runs equal", equal, compared)
                    : "not deterministic: " + why;
            System.out.printf("  %-4s %s; %s repeatable: %s%n", q.name(), verdict, mode.reference(),
                    outcome.repeatable().get(q.name()));
        }
        if (!outcome.bugs().isEmpty()) {
            System.out.println();
            System.out.println("!!!!!!!! RESULTS DIFFER FROM THE REFERENCE'S (" + mode.reference()
                    + "), OR RUNS FAILED !!!!!!!!");
            outcome.bugs().forEach(b -> System.out.println("!!! " + b));
        }
    }

    /**
     * The full mode's duration from the quick mode's: per run the time outside the job (planning,
     * cluster start), the full mode's events at the quick run's steady rate times {@link #FULL_SLOWDOWN},
     * and half a checkpoint interval of waiting for the final checkpoint; two rounds, no repeats.
     */
    static double estimateFullSeconds(List<NexmarkRun> runs, NexmarkMode mode, double quickSeconds) {
        NexmarkMode full = NexmarkMode.of(true);
        double inJobs = runs.stream().filter(r -> r.error() == null).mapToDouble(NexmarkRun::seconds).sum();
        double outsideJobs = (quickSeconds - inJobs) / mode.runs();
        double perRound = 0;
        for (NexmarkRun r : runs) {
            if (r.error() == null) {
                perRound += outsideJobs + FULL_SLOWDOWN * full.events() / r.steadyEventsPerSecond()
                        + full.checkpointSeconds() / 2.0;
            }
        }
        return perRound / mode.rounds() * full.rounds();
    }

    private static void writeSettings(Path file, NexmarkMode mode, String determinism,
            NexmarkBench.Measured paced) throws IOException {
        NexmarkConfig c = mode.config();
        try (PrintWriter csv = new PrintWriter(Files.newBufferedWriter(file))) {
            csv.println("key,value");
            csv.printf(Locale.ROOT, "what,Nexmark queries in Flink SQL on a MiniCluster (parallelism 1; %s managed"
                    + " memory for every backend); one job per run; in this JVM%n", ExpiryJobBench.MANAGED_MEMORY);
            csv.printf("queries,%s%n", String.join(" ", mode.queries().stream().map(q -> q.name() + " (" + q.title()
                    + ")").toList()));
            csv.printf(Locale.ROOT, "events,%,d per run; bounded; the same events in every run%n", mode.events());
            csv.printf("memory limit,%s%n", NexmarkContainer.limit());
            csv.printf(Locale.ROOT, "generator,the Nexmark specification's; written anew (NexmarkGenerator): of every"
                    + " %d events %d person; %d auctions; %d bids; ids from the event number; hot auction ratio %d;"
                    + " hot seller ratio %d; hot bidder ratio %d (hot = first of the newest %d); %d auctions in"
                    + " flight; %d active people; average sizes %d/%d/%d bytes (person/auction/bid); prices"
                    + " log-uniform 1 to 1,000,000 dollars; random choices from the event number and seed %d (the"
                    + " Nexmark project's Flink generator draws them unseeded and adds the first person id to a"
                    + " bidder twice; here the same events every run and bidders are person ids)%n",
                    NexmarkConfig.TOTAL_PROPORTION, NexmarkConfig.PERSON_PROPORTION, NexmarkConfig.AUCTION_PROPORTION,
                    NexmarkConfig.BID_PROPORTION, NexmarkConfig.HOT_AUCTION_RATIO, NexmarkConfig.HOT_SELLER_RATIO,
                    NexmarkConfig.HOT_BIDDER_RATIO, NexmarkConfig.HOT_GROUP, NexmarkConfig.IN_FLIGHT_AUCTIONS,
                    NexmarkConfig.ACTIVE_PEOPLE, NexmarkConfig.AVG_PERSON_BYTES, NexmarkConfig.AVG_AUCTION_BYTES,
                    NexmarkConfig.AVG_BID_BYTES, c.seed());
            csv.printf(Locale.ROOT, "event time,event n at %s + n / %,d s (the rate in event time; not the wall"
                    + " clock); in order; watermark 4 s behind (dateTime - INTERVAL '4' SECOND); the job reads as"
                    + " fast as it can%n", java.time.Instant.ofEpochMilli(c.baseTimeMillis()), c.eventsPerSecond());
            csv.printf("sql options,%s; table.exec.state.ttl unset (state kept forever)%s%n",
                    String.join("; ", NexmarkJob.sqlOptions(mode.asyncState(), mode.asyncState()).entrySet().stream()
                            .map(Map.Entry::toString).toList()), mode.asyncState() ? "; table.exec.async-state.enabled"
                            + " true for Lethe (on its executor, state.backend.lethe.async-state.executor: true; as"
                            + " lethe-adaptor through Flink's synchronous adaptor, its default) and ForSt (its own"
                            + " executor, as shipped), false for the others (synchronous state, the same plan)"
                            : "; async state off");
            for (String[] b : JobBackends.SETTINGS) {
                if (mode.backends().contains(b[0])) {
                    csv.printf("backend %s,%s%n", b[0], b[1]);
                }
            }
            csv.printf("checkpoints,every %d s; incremental (full for HashMap); no restarts%n",
                    mode.checkpointSeconds());
            csv.println("events/s,events_per_s: steady state: the events from 10 % to 90 % of the input over the time"
                    + " they took to enter the job (startup; the last windows; mini-batches and the final checkpoint"
                    + " excluded); job_events_per_s: over the whole job");
            csv.println("local state,the backend's local directory sampled every 250 ms (largest)");
            csv.println("requests per batch,async_requests_per_batch: with asynchronous state on Lethe's executor, the"
                    + " requests per batch Flink's controller handed it over the whole job (its gauges)");
            csv.println("checkpoint size,from Flink's checkpoint statistics: the largest full size of a completed"
                    + " checkpoint (the final one after the input ended included) and the final one's");
            csv.println("result,the query's final result as a multiset (+I/+U add a row; -U/-D remove one); rows"
                    + " rendered canonically (fields joined by |); each kept as the first 16 bytes of its SHA-256"
                    + " with its multiplicity; result_sha256 = SHA-256 of the sorted lines '<row digest> <count>';"
                    + " result_rows = rows with multiplicity; result_changes = changelog rows");
            String ref = mode.reference();
            csv.printf("equal_to_%s,yes/no: the backend's result equals %s's in the same round%s; not deterministic:"
                    + " the query's result may vary between runs even on one backend (by reasoning; or because two"
                    + " runs on %s differed) and why; a deterministic query with a no makes the benchmark exit with"
                    + " status 1%n", ref, ref, mode.asyncState() ? " (RocksDB with synchronous state: the Nexmark"
                    + " part checks its results against the HashMap backend's; the heap would not hold this state)"
                    : "", ref);
            csv.printf("determinism,%s%n", determinism);
            csv.printf("%s_repeatable,whether the query's runs on %s gave one result (%s)%n", ref, ref,
                    mode.repeatsReference() ? "its run and a repeat" : "one per round");
            if (mode.asyncState()) {
                csv.println("async_state,whether the run used asynchronous state (State V2 through Flink's execution"
                        + " controller and the backend's executor) or synchronous state");
            }
            csv.printf("rounds,%d; backends interleaved (order rotated each round)%n", mode.rounds());
            if (paced != null) {
                NexmarkMode p = paced.mode();
                csv.printf(Locale.ROOT, "latency,paced runs (paced_events_per_s > 0) of %s: %,d events with the source"
                        + " at %,d events/s and event time at the same rate (so other events than the unpaced runs'),"
                        + " the same for every backend; a result row's latency: from the moment the newest event it"
                        + " carries (its dateTime columns) was due to leave the source to the row reaching the sink;"
                        + " rows that add a result (+I; +U) count; HdrHistogram; their results compared with %s's"
                        + " paced run (%s)%n", String.join(" ", p.queries().stream().map(NexmarkQueries.Query::name)
                        .toList()), p.events(), p.pacedRate(), p.reference(), paced.determinism().replace(',', ';'));
            }
        }
    }

    private static String cell(double v, String format) {
        return Double.isNaN(v) ? "" : String.format(Locale.ROOT, format, v);
    }

    /** A CSV cell: the suite splits lines at every comma. */
    private static String text(String s) {
        return s == null ? "" : s.replace(',', ';');
    }
}
