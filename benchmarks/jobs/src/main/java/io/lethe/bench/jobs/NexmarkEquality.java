package io.lethe.bench.jobs;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * Whether every backend gave the reference backend's result (the HashMap backend's; in the asynchronous
 * part RocksDB's with synchronous state, which the other part checks against the HashMap backend), query
 * by query and round by round, and which queries are not deterministic: those the reasoning says may vary
 * on this input ({@link #reason}) and those whose runs on the reference (each round's, and a repeat in
 * quick mode) disagreed with each other. A deterministic query on which a backend differs from the
 * reference is a bug signal; so is a run that failed.
 */
final class NexmarkEquality {
    static final String HASHMAP = "hashmap";

    /**
     * @param verdicts per run ({@link #key}): "reference", "yes", "no", "not deterministic: why (this run:
     *     equal|differs)" or "error: ..."
     * @param repeatable per query: whether all its runs on the reference agreed ("yes", "no", or
     *     "unknown" with fewer than two)
     * @param nondeterministic per query, why its result may vary between runs (by reasoning, or seen on
     *     the reference); null for a deterministic query
     * @param bugs what must fail the benchmark, one line each
     */
    record Outcome(Map<String, String> verdicts, Map<String, String> repeatable, Map<String, String> nondeterministic,
            List<String> bugs) {
        String verdict(NexmarkRun r) {
            return verdicts.get(key(r));
        }
    }

    private NexmarkEquality() {}

    static String key(NexmarkRun r) {
        return r.query() + "/" + r.backend() + "/" + r.round();
    }

    /**
     * Decides by reasoning which queries' results may vary between runs on this input (into {@code
     * reasoned}: why, or null) and says how: q9's ties are counted in the input.
     */
    static String reason(List<NexmarkQueries.Query> queries, NexmarkGenerator generator, long events,
            Map<String, String> reasoned, String reference) {
        StringBuilder how = new StringBuilder("by reasoning (NexmarkQueries): aggregations, windows and regular"
                + " joins give one final result in any order (no event is late); ROW_NUMBER keeps the first to"
                + " arrive of rows equal on its keys: q18 and q19 rank one input, which arrives in the source's"
                + " order every run");
        for (NexmarkQueries.Query q : queries) {
            String why = q.variesWhen();
            if (q.name().equals("q9")) {
                NexmarkWinningBids w = NexmarkWinningBids.of(generator, events);
                why = w.tiedWinners() == 0 ? null : why + "; the input has " + w.tiedWinners() + " such ties";
                how.append(String.format(Locale.ROOT, "; q9 ranks a join's output (its inputs interleave differently"
                        + " each run): it varies only if two bids tie for an auction's highest price in the same"
                        + " millisecond: this input has %,d winning bids, %,d of them tied (NexmarkWinningBids)",
                        w.winners(), w.tiedWinners()));
            } else if (why != null) {
                how.append("; ").append(q.name()).append(": ").append(why);
            }
            reasoned.put(q.name(), why);
        }
        return how.append("; and by comparing each query's runs on ").append(reference).toString();
    }

    /**
     * Judges the runs of each query against the reference backend's run in the same round.
     *
     * @param repeats more runs on the reference, to see whether its result repeats
     * @param reasoned per query, why its result may vary between runs on this input ({@link #reason});
     *     queries without an entry (or with null) should not vary
     */
    static Outcome judge(List<NexmarkRun> runs, List<NexmarkRun> repeats, Map<String, String> reasoned,
            String reference) {
        Map<String, String> verdicts = new HashMap<>();
        Map<String, String> repeatable = new HashMap<>();
        Map<String, String> nondeterministic = new HashMap<>();
        List<String> bugs = new ArrayList<>();
        // Without the reference among the runs (an experiment on some backends), nothing is checked.
        boolean checked = runs.stream().anyMatch(r -> r.backend().equals(reference));
        for (NexmarkQueries.Query query : NexmarkQueries.ALL) {
            List<NexmarkRun> mine = runs.stream().filter(r -> r.query().equals(query.name())).toList();
            if (mine.isEmpty()) {
                continue;
            }
            String agreed = referenceAgrees(query.name(), runs, repeats, reference);
            repeatable.put(query.name(), agreed);
            String why = nondeterminism(reasoned.get(query.name()), agreed, reference);
            nondeterministic.put(query.name(), why);
            for (NexmarkRun r : mine) {
                NexmarkRun ref = referenceOf(r, runs, reference);
                String verdict = checked || r.error() != null ? verdict(r, ref, why, reference)
                        : "not checked: " + reference + " did not run";
                verdicts.put(key(r), verdict);
                if (verdict.equals("no") || verdict.startsWith("error")) {
                    bugs.add(describe(r, ref, verdict));
                }
            }
        }
        return new Outcome(verdicts, repeatable, nondeterministic, bugs);
    }

    /** Why the query's result may vary on one backend, or null if it should not. */
    private static String nondeterminism(String reasoned, String referenceAgreed, String reference) {
        String observed = referenceAgreed.equals("no") ? "two runs on " + reference + " gave different results" : null;
        if (reasoned == null) {
            return observed;
        }
        return observed == null ? reasoned : reasoned + "; " + observed;
    }

    private static String verdict(NexmarkRun r, NexmarkRun reference, String nondeterminism, String referenceName) {
        if (r.error() != null) {
            return "error: " + r.error();
        }
        if (r.backend().equals(referenceName)) {
            return "reference";
        }
        if (reference == null || reference.error() != null) {
            return "error: no " + referenceName + " result in this round";
        }
        boolean equal = r.result().equals(reference.result());
        if (nondeterminism != null) {
            return "not deterministic: " + nondeterminism + " (this run: " + (equal ? "equal" : "differs") + ")";
        }
        return equal ? "yes" : "no";
    }

    private static NexmarkRun referenceOf(NexmarkRun r, List<NexmarkRun> runs, String reference) {
        return runs.stream().filter(o -> o.query().equals(r.query()) && o.round() == r.round()
                && o.backend().equals(reference)).findFirst().orElse(null);
    }

    private static String referenceAgrees(String query, List<NexmarkRun> runs, List<NexmarkRun> repeats,
            String reference) {
        List<NexmarkMultiset.Fingerprint> results = new ArrayList<>();
        for (List<NexmarkRun> list : List.of(runs, repeats)) {
            list.stream().filter(r -> r.query().equals(query) && r.backend().equals(reference) && r.error() == null)
                    .forEach(r -> results.add(r.result()));
        }
        if (results.size() < 2) {
            return "unknown";
        }
        return results.stream().allMatch(f -> Objects.equals(f, results.get(0))) ? "yes" : "no";
    }

    private static String describe(NexmarkRun r, NexmarkRun reference, String verdict) {
        if (verdict.startsWith("error")) {
            return r.query() + " round " + r.round() + " on " + r.backend() + ": " + verdict;
        }
        return String.format("%s round %d: %s gave %d rows (sha256 %s), %s %d rows (sha256 %s)", r.query(),
                r.round(), r.backend(), r.result().rows(), r.result().sha256(), reference.backend(),
                reference.result().rows(), reference.result().sha256());
    }
}
