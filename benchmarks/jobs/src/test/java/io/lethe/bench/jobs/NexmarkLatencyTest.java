package io.lethe.bench.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;
import org.junit.jupiter.api.Test;

import java.util.List;

/**
 * A paced run's result row is as late as the newest event it carries: its latency counts from when that
 * event was due to leave the source; retractions and rows without event times do not count.
 */
class NexmarkLatencyTest {
    private static final long BASE = NexmarkConfig.DEFAULT_BASE_TIME;

    @Test
    void aRowIsAsLateAsTheNewestEventItCarries() {
        NexmarkLatency latency = NexmarkLatency.of(List.of("auction", "bid_dateTime", "price", "auction_dateTime"),
                BASE);
        long first = System.nanoTime();
        NexmarkLatency.firstEmitted();
        // The bid came 2 s after the first event, the auction 1 s after it: the bid was due at +2 s.
        Row row = Row.ofKind(RowKind.INSERT, 7L, NexmarkRows.time(BASE + 2_000), 10L, NexmarkRows.time(BASE + 1_000));
        long now = first + 2_500_000_000L;
        long micros = latency.micros(row, now);
        assertEquals(500_000, micros, 1_000);
    }

    @Test
    void retractionsAndRowsWithoutEventTimesDoNotCount() {
        NexmarkLatency latency = NexmarkLatency.of(List.of("bidder", "dateTime"), BASE);
        NexmarkLatency.firstEmitted();
        long now = System.nanoTime();
        assertEquals(NexmarkLatency.NOT_COUNTED, latency.micros(Row.ofKind(RowKind.UPDATE_BEFORE, 1L,
                NexmarkRows.time(BASE)), now));
        assertEquals(NexmarkLatency.NOT_COUNTED, latency.micros(Row.ofKind(RowKind.DELETE, 1L,
                NexmarkRows.time(BASE)), now));
        assertEquals(NexmarkLatency.NOT_COUNTED, latency.micros(Row.ofKind(RowKind.UPDATE_AFTER, 1L, null), now));
        assertNull(NexmarkLatency.of(List.of("category", "avg_final_price"), BASE), "an aggregate has no latency");
    }
}
