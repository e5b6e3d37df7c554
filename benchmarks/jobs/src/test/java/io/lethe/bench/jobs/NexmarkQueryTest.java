package io.lethe.bench.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;

/**
 * q9 (a regular join, then ROW_NUMBER with retractions) runs on the HashMap backend and on Lethe: both
 * give the same result, with one row per auction that a plain Java computation finds a winner for.
 */
class NexmarkQueryTest {
    private static final long EVENTS = 20_000;

    @Test
    void q9GivesTheSameResultOnHashmapAndLethe(@TempDir Path work) {
        NexmarkQueries.Query q9 = NexmarkQueries.byName("q9");
        NexmarkMode mode = new NexmarkMode("test", EVENTS, 1, 1, NexmarkConfig.withRate(10_000),
                List.of("hashmap", "lethe"), List.of(q9), false);
        NexmarkWinningBids expected = NexmarkWinningBids.of(new NexmarkGenerator(mode.config()), EVENTS);
        assertEquals(0, expected.tiedWinners(), "this input has no ties: q9 is deterministic on it");

        NexmarkRun hashmap = NexmarkBench.run(q9, "hashmap", 1, mode, work);
        NexmarkRun lethe = NexmarkBench.run(q9, "lethe", 1, mode, work);
        assertNull(hashmap.error());
        assertNull(lethe.error());
        assertEquals(expected.winners(), hashmap.result().rows());
        assertEquals(0, hashmap.result().negativeRows());
        assertTrue(lethe.changes() > lethe.result().rows(), "higher bids replaced earlier winners");
        assertEquals(hashmap.result(), lethe.result());
    }
}
