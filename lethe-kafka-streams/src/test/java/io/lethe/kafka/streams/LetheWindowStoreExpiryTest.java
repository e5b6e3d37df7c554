package io.lethe.kafka.streams;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.LogContext;
import org.apache.kafka.common.utils.MockTime;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.processor.internals.metrics.StreamsMetricsImpl;
import org.apache.kafka.streams.state.internals.ThreadCache;
import org.apache.kafka.streams.state.internals.WindowKeySchema;
import org.apache.kafka.test.InternalMockProcessorContext;
import org.apache.kafka.test.StreamsTestUtils;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

/**
 * Expired windows leave the store's files: once stream time passes a window's retention and the
 * horizon follows (at flushes, or with the wall clock while records arrive), no file keeps a page
 * with entries of it after the delete persistence threshold (the engine reports the smallest delete
 * key of the pages left in its files). The horizon trails behind, so that input replayed after a crash
 * between a flush and Kafka Streams' commit never meets a horizon it moved.
 */
class LetheWindowStoreExpiryTest {
    private static final long RETENTION = 2_000;
    private static final long THRESHOLD_MS = 1_000;

    @TempDir
    Path dir;

    /**
     * Under {@code at_least_once} Kafka Streams flushes a store at commits; under {@code
     * exactly_once_v2} never while it runs, so the horizon must also move with the wall clock while
     * records arrive ({@code clock}: no flush at all, the clock advancing 100 ms per 20 records).
     */
    @ParameterizedTest
    @ValueSource(strings = {"flush", "clock"})
    void expiredWindowsLeaveTheFilesWithinTheThreshold(String moves) throws Exception {
        Properties props = StreamsTestUtils.getStreamsConfig();
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        props.put(LetheStoreConfig.WRITE_BUFFER_BYTES, String.valueOf(256 << 10));
        props.put(LetheStoreConfig.DELETE_PERSISTENCE_THRESHOLD_MS, String.valueOf(THRESHOLD_MS));
        MockTime time = new MockTime();
        InternalMockProcessorContext<?, ?> context = context(props, time);
        LetheWindowStore store = new LetheWindowStore("expiry", RETENTION, 100, false);
        store.init(context, store);
        byte[] value = new byte[400];
        long streamTime = 0;
        for (long t = 0; t < 60_000; t += 5) {
            store.put(key(t), value, t);
            streamTime = t;
            if (moves.equals("flush") && t % 1_000 == 0) {
                store.flush();
            } else if (moves.equals("clock") && t % 100 == 0) {
                time.sleep(100);
            }
        }
        for (int i = 0; i < 3; i++) {  // the horizon follows behind: two flushes, or three samples
            if (moves.equals("flush")) {
                store.flush();
            } else {
                time.sleep(1_000);
                store.put(key(streamTime), value, streamTime);
            }
        }
        assertEquals(streamTime - RETENTION + 1, store.store.db().horizon(store.store.family()));
        long horizon = streamTime - RETENTION + 1;
        assertNull(store.fetch(key(horizon - 1), horizon - 1), "an expired window is never returned");

        long committed = System.nanoTime();
        long oldest = oldestDeleteKey(store);
        while (oldest < horizon && System.nanoTime() - committed < (THRESHOLD_MS + 10_000) * 1_000_000) {
            Thread.sleep(100);
            oldest = oldestDeleteKey(store);
        }
        long elapsedMs = (System.nanoTime() - committed) / 1_000_000;
        assertTrue(oldest >= horizon, "a file still holds windows from " + oldest + " below the horizon " + horizon
                + " after " + elapsedMs + " ms:\n" + files(store));
        // Scheduling slack on a loaded machine: compactions run in the background.
        assertTrue(elapsedMs <= THRESHOLD_MS + 5_000, "expired windows left after " + elapsedMs + " ms");
        long bytes = Long.parseLong(store.store.db().property(store.store.family(), "lethe.total-bytes"));
        long live = (RETENTION / 5) * (value.length + 30);
        assertTrue(bytes < 4 * live, bytes + " bytes in files for about " + live + " bytes of live windows");
        store.close();
    }

    /**
     * Under at_least_once a crash replays the input since the last commit onto the store as it was. A
     * window that was live when that input was first processed must be written again on the replay,
     * so while no flush comes the horizon trails by two commit intervals (one sample ahead of the
     * horizon fails this).
     */
    @Test
    void inputReplayedAfterACrashFindsItsWindowsLive() {
        Properties props = StreamsTestUtils.getStreamsConfig();
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.AT_LEAST_ONCE);
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 1_000);
        MockTime time = new MockTime();
        InternalMockProcessorContext<?, ?> context = context(props, time);
        LetheWindowStore store = new LetheWindowStore("replay", 1_000, 100, false);
        store.init(context, store);
        Bytes a = Bytes.wrap(new byte[] {'a'});
        Bytes late = Bytes.wrap(new byte[] {'l'});
        byte[] v = {1};
        store.put(a, v, 5_000);
        time.sleep(1_000);  // a commit: stream time 5,000 is committed
        store.put(a, v, 5_500);
        store.put(late, v, 4_600);  // late, but live at stream time 5,500
        assertArrayEquals(v, store.fetch(late, 4_600));
        time.sleep(1_000);
        store.put(a, v, 6_000);
        store.close();  // the process dies before the next commit: from 5,500 on is replayed

        LetheWindowStore reopened = new LetheWindowStore("replay", 1_000, 100, false);
        reopened.init(context, reopened);
        reopened.put(a, v, 5_500);
        reopened.put(late, v, 4_600);
        assertArrayEquals(v, reopened.fetch(late, 4_600), "the replayed late window was dropped");
        reopened.put(a, v, 6_000);
        assertNull(reopened.fetch(late, 4_600), "expired at stream time 6,000");
        reopened.close();
    }

    /**
     * A write of an expired window is dropped and counted in the task's dropped-records metric; on a
     * restore from the changelog, expired records are skipped without counting (and without a warning
     * each), as Kafka Streams' own stores restore.
     */
    @Test
    void droppedRecordsCountLiveWritesNotRestoredOnes() {
        Properties props = StreamsTestUtils.getStreamsConfig();
        InternalMockProcessorContext<?, ?> context = context(props, new MockTime());
        LetheWindowStore store = new LetheWindowStore("dropped", 1_000, 100, false);
        store.init(context, store);
        Bytes a = Bytes.wrap(new byte[] {'a'});
        byte[] v = {1};
        store.put(a, v, 5_000);
        store.put(a, v, 3_000);
        assertEquals(1.0, droppedRecords(context), "a live write of an expired window");

        List<ConsumerRecord<byte[], byte[]>> changelog = new ArrayList<>();
        for (long t = 0; t < 2_000; t += 100) {  // expired at stream time 6,000
            changelog.add(changelogRecord(a, t, changelog.size()));
        }
        changelog.add(changelogRecord(a, 6_000, changelog.size()));
        store.restore(changelog);
        assertEquals(1.0, droppedRecords(context), "restored expired records are not counted");
        assertNull(store.fetch(a, 1_900));
        assertArrayEquals(v, store.fetch(a, 6_000));
        store.close();
    }

    private static ConsumerRecord<byte[], byte[]> changelogRecord(Bytes key, long windowStart, long offset) {
        byte[] storeKey = WindowKeySchema.toStoreKeyBinary(key, windowStart, 0).get();
        return new ConsumerRecord<>("changelog", 0, offset, storeKey, new byte[] {1});
    }

    private static double droppedRecords(InternalMockProcessorContext<?, ?> context) {
        return context.metrics().metrics().entrySet().stream()
                .filter(e -> e.getKey().name().equals("dropped-records-total"))
                .mapToDouble(e -> (Double) e.getValue().metricValue()).sum();
    }

    private InternalMockProcessorContext<?, ?> context(Properties props, MockTime time) {
        StreamsMetricsImpl metrics = new StreamsMetricsImpl(new Metrics(), "test", time);
        return new InternalMockProcessorContext<>(dir.toFile(), Serdes.Bytes(), Serdes.ByteArray(), metrics,
                new StreamsConfig(props), () -> null, new ThreadCache(new LogContext(), 0, metrics), time);
    }

    private static Bytes key(long t) {
        return Bytes.wrap(("key" + (t % 37)).getBytes(StandardCharsets.UTF_8));
    }

    private static String files(LetheWindowStore store) {
        return store.store.db().property(store.store.family(), "lethe.files");
    }

    /** The smallest delete key of any remaining page in any file (Long.MAX_VALUE if none). */
    private static long oldestDeleteKey(LetheWindowStore store) {
        long oldest = Long.parseUnsignedLong(store.store.db().property(store.store.family(),
                "lethe.oldest-delete-key"));
        return oldest == -1 ? Long.MAX_VALUE : oldest;  // all ones: none
    }
}
