package io.lethe.bench.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

/**
 * A deterministic query that differs from the HashMap backend is a bug; a non-deterministic one is not,
 * and without a HashMap run only failures are.
 */
class NexmarkEqualityTest {
    private static final NexmarkMultiset.Fingerprint A = new NexmarkMultiset.Fingerprint("aa", 3, 0);
    private static final NexmarkMultiset.Fingerprint B = new NexmarkMultiset.Fingerprint("bb", 3, 0);

    @Test
    void aDeterministicQueryThatDiffersIsABug() {
        List<NexmarkRun> runs = List.of(run("q4", "hashmap", A), run("q4", "lethe", B), run("q4", "rocksdb", A));
        NexmarkEquality.Outcome o = NexmarkEquality.judge(runs, List.of(run("q4", "hashmap", A)), Map.of(), "hashmap");
        assertEquals("no", o.verdict(runs.get(1)));
        assertEquals("yes", o.verdict(runs.get(2)));
        assertEquals("reference", o.verdict(runs.get(0)));
        assertEquals("yes", o.repeatable().get("q4"));
        assertEquals(1, o.bugs().size());
        assertTrue(o.bugs().get(0).contains("lethe"), o.bugs().get(0));
        assertEquals(null, o.nondeterministic().get("q4"));
    }

    @Test
    void aQueryReasonedNonDeterministicIsNoBug() {
        List<NexmarkRun> runs = List.of(run("q9", "hashmap", A), run("q9", "lethe", B));
        NexmarkEquality.Outcome o = NexmarkEquality.judge(runs, List.of(run("q9", "hashmap", A)),
                Map.of("q9", "ties: two bids tie"), "hashmap");
        assertTrue(o.verdict(runs.get(1)).startsWith("not deterministic: ties"), o.verdict(runs.get(1)));
        assertTrue(o.verdict(runs.get(1)).endsWith("(this run: differs)"), o.verdict(runs.get(1)));
        assertTrue(o.bugs().isEmpty());
    }

    @Test
    void hashmapDisagreeingWithItselfMakesAQueryNonDeterministic() {
        List<NexmarkRun> runs = List.of(run("q5", "hashmap", A), run("q5", "lethe", A));
        NexmarkEquality.Outcome o = NexmarkEquality.judge(runs, List.of(run("q5", "hashmap", B)), Map.of(), "hashmap");
        assertEquals("no", o.repeatable().get("q5"));
        assertEquals("not deterministic: two runs on hashmap gave different results (this run: equal)",
                o.verdict(runs.get(1)));
        assertTrue(o.bugs().isEmpty());
    }

    @Test
    void aFailedRunIsABug() {
        List<NexmarkRun> runs = List.of(run("q4", "hashmap", A),
                NexmarkRun.failed("q4", "forst", 1, 10, 0, "IOException disk full"));
        NexmarkEquality.Outcome o = NexmarkEquality.judge(runs, List.of(), Map.of(), "hashmap");
        assertEquals("error: IOException disk full", o.verdict(runs.get(1)));
        assertEquals(1, o.bugs().size());
    }

    @Test
    void withoutTheHashMapBackendNothingIsCheckedButFailures() {
        List<NexmarkRun> runs = List.of(run("q20", "lethe", A), run("q20", "forst", B),
                NexmarkRun.failed("q20", "rocksdb", 1, 10, 0, "IOException disk full"));
        NexmarkEquality.Outcome o = NexmarkEquality.judge(runs, List.of(), Map.of(), "hashmap");
        assertEquals("not checked: hashmap did not run", o.verdict(runs.get(0)));
        assertEquals("not checked: hashmap did not run", o.verdict(runs.get(1)));
        assertEquals("error: IOException disk full", o.verdict(runs.get(2)));
        assertEquals(1, o.bugs().size());
    }

    @Test
    void theAsynchronousPartIsJudgedAgainstRocksDbsResult() {
        List<NexmarkRun> runs = List.of(run("q4", "lethe", A), run("q4", "forst", B), run("q4", "rocksdb", A));
        NexmarkEquality.Outcome o = NexmarkEquality.judge(runs, List.of(), Map.of(), "rocksdb");
        assertEquals("yes", o.verdict(runs.get(0)));
        assertEquals("no", o.verdict(runs.get(1)));
        assertEquals("reference", o.verdict(runs.get(2)));
        assertTrue(o.bugs().get(0).contains("rocksdb 3 rows"), o.bugs().get(0));
    }

    private static NexmarkRun run(String query, String backend, NexmarkMultiset.Fingerprint result) {
        return new NexmarkRun(query, backend, 1, 10, 1.0, 0, List.of(), List.of(), result, 3, Double.NaN, null);
    }
}
