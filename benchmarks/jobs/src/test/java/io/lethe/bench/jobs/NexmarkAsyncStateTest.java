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
 * with its input (q7), row-time deduplication (q18) and a top-N rank (q19). (q5's HOP windows give
 * fewer rows with any executor that answers after the request, ForSt's too: see docs/flink-backend.md.)
 */
class NexmarkAsyncStateTest {
    private static final long EVENTS = 20_000;

    @ParameterizedTest
    @ValueSource(strings = {"q4", "q7", "q18", "q19"})
    void asynchronousStateOnLetheGivesTheHashMapBackendsResult(String name, @TempDir Path work) {
        NexmarkQueries.Query query = NexmarkQueries.byName(name);
        NexmarkRun hashmap = NexmarkBench.run(query, "hashmap", 1, mode(false), work);
        NexmarkRun lethe = NexmarkBench.run(query, "lethe", 1, mode(true), work);
        assertNull(hashmap.error());
        assertNull(lethe.error());
        assertEquals(hashmap.result(), lethe.result());
    }

    @Test
    void letheRunsAsynchronousStateOnItsOwnExecutor(@TempDir Path dir) {
        Configuration conf = NexmarkBench.configuration("lethe", dir, dir, 1, "test", true);
        assertEquals("true", conf.getString("state.backend.lethe.async-state.executor", "unset"));
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
