package io.lethe.bench.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.flink.configuration.Configuration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * SQL with asynchronous state on Lethe's executor gives exactly the result of synchronous state on
 * the HashMap backend: a regular join under a group aggregate (q4), a TUMBLE window aggregate joined
 * with its input (q7), row-time deduplication (q18), a top-N rank (q19) and a Top-1 rank. HOP and
 * CUMULATE window aggregates lose windows in Flink 2.2's asynchronous operator with any executor that
 * answers after the request, ForSt's too (see docs/flink-backend.md); with Lethe's default for
 * asynchronous state, Flink's synchronous adaptor, they give the HashMap backend's result.
 */
class NexmarkAsyncStateTest {
    private static final long EVENTS = 20_000;

    /** Queries over the Nexmark views that are not in the benchmark's set. */
    private static final Map<String, String> MORE = Map.of(
            "top1", "SELECT auction, bidder, price FROM (SELECT auction, bidder, price, ROW_NUMBER() OVER"
                    + " (PARTITION BY auction ORDER BY price DESC) AS rn FROM bid) WHERE rn = 1",
            "hop", "SELECT auction, COUNT(*) AS num, MAX(price) AS top, window_start, window_end FROM TABLE(HOP("
                    + "TABLE bid, DESCRIPTOR(`dateTime`), INTERVAL '2' SECOND, INTERVAL '10' SECOND))"
                    + " GROUP BY auction, window_start, window_end",
            "cumulate", "SELECT auction, COUNT(*) AS num, MAX(price) AS top, window_start, window_end FROM"
                    + " TABLE(CUMULATE(TABLE bid, DESCRIPTOR(`dateTime`), INTERVAL '2' SECOND, INTERVAL '10' SECOND))"
                    + " GROUP BY auction, window_start, window_end");

    @ParameterizedTest
    @ValueSource(strings = {"q4", "q7", "q18", "q19"})
    void asynchronousStateOnLetheGivesTheHashMapBackendsResult(String name, @TempDir Path work) {
        assertSameResult(NexmarkQueries.byName(name), "lethe", work);
    }

    @Test
    void aTopOneRankOnLethesExecutorGivesTheHashMapBackendsResult(@TempDir Path work) {
        assertSameResult(more("top1"), "lethe", work);
    }

    @ParameterizedTest
    @ValueSource(strings = {"hop", "cumulate"})
    void windowsOverSharedSlicesThroughTheAdaptorGiveTheHashMapBackendsResult(String name, @TempDir Path work) {
        assertSameResult(more(name), "lethe-adaptor", work);
    }

    private static void assertSameResult(NexmarkQueries.Query query, String backend, Path work) {
        NexmarkRun hashmap = NexmarkBench.run(query, "hashmap", 1, mode(false), work);
        NexmarkRun lethe = NexmarkBench.run(query, backend, 1, mode(true), work);
        assertNull(hashmap.error());
        assertNull(lethe.error());
        assertTrue(hashmap.changes() > 0, "the query has results");
        assertEquals(hashmap.result(), lethe.result());
    }

    private static NexmarkQueries.Query more(String name) {
        return new NexmarkQueries.Query(name, name, MORE.get(name), null);
    }

    @Test
    void letheRunsAsynchronousStateOnItsOwnExecutor(@TempDir Path dir) {
        Configuration conf = NexmarkBench.configuration("lethe", dir, dir, 1, "test", true);
        assertEquals("true", conf.getString("state.backend.lethe.async-state.executor", "unset"));
        Configuration adaptor = NexmarkBench.configuration("lethe-adaptor", dir, dir, 1, "test", true);
        assertEquals("unset", adaptor.getString("state.backend.lethe.async-state.executor", "unset"));
        assertEquals("true", NexmarkJob.sqlOptions(true, true).get("table.exec.async-state.enabled"));
        assertEquals("false", NexmarkJob.sqlOptions(true, true).get("table.exec.mini-batch.enabled"));
    }

    @Test
    void theAsynchronousPartRunsRocksDbWithSynchronousStateOnTheSamePlan() {
        NexmarkMode mode = mode(true);
        assertTrue(mode.asyncStateOn("lethe"));
        assertTrue(mode.asyncStateOn("forst"));
        assertFalse(mode.asyncStateOn("rocksdb"));
        assertEquals("rocksdb", mode.reference());
        assertEquals("nexmark-async", mode.csvName());
        Map<String, String> sync = NexmarkJob.sqlOptions(true, false);
        assertEquals("false", sync.get("table.exec.async-state.enabled"));
        assertEquals("false", sync.get("table.exec.mini-batch.enabled"));
        assertEquals("ONE_PHASE", sync.get("table.optimizer.agg-phase-strategy"));
        assertEquals("hashmap", mode(false).reference());
        assertFalse(mode(false).asyncStateOn("lethe"));
    }

    private static NexmarkMode mode(boolean asyncState) {
        return new NexmarkMode("test", EVENTS, 1, 1, NexmarkConfig.withRate(10_000), List.of("hashmap", "lethe"),
                NexmarkQueries.ALL, asyncState);
    }
}
