package io.lethe.kafka.streams;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.processor.internals.ProcessorRecordContext;
import org.apache.kafka.streams.query.FailureReason;
import org.apache.kafka.streams.query.KeyQuery;
import org.apache.kafka.streams.query.Position;
import org.apache.kafka.streams.query.PositionBound;
import org.apache.kafka.streams.query.QueryConfig;
import org.apache.kafka.streams.query.QueryResult;
import org.apache.kafka.streams.query.RangeQuery;
import org.apache.kafka.streams.query.TimestampedKeyQuery;
import org.apache.kafka.streams.query.TimestampedRangeQuery;
import org.apache.kafka.streams.query.WindowKeyQuery;
import org.apache.kafka.streams.query.WindowRangeQuery;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.TimestampedKeyValueStore;
import org.apache.kafka.streams.state.TimestampedWindowStore;
import org.apache.kafka.streams.state.ValueAndTimestamp;
import org.apache.kafka.streams.state.WindowStore;
import org.apache.kafka.streams.state.WindowStoreIterator;
import org.apache.kafka.test.InternalMockProcessorContext;
import org.apache.kafka.test.StreamsTestUtils;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Interactive queries (IQv2) on Lethe's stores under Kafka Streams' metered layer: key and range
 * queries on a key-value store, key and range queries on a window store, each answered only up to
 * the store's position, which follows the offsets of the records written; and the timestamped forms
 * on timestamped stores.
 */
class InteractiveQueryTest {
    private static final QueryConfig CONFIG = new QueryConfig(false);

    @TempDir
    Path dir;
    private InternalMockProcessorContext<?, ?> context;
    private KeyValueStore<String, String> kv;
    private WindowStore<String, String> windows;

    @BeforeEach
    void open() {
        context = new InternalMockProcessorContext<>(dir.toFile(), Serdes.String(), Serdes.String(),
                new StreamsConfig(StreamsTestUtils.getStreamsConfig()));
        kv = Stores.keyValueStoreBuilder(LetheStores.persistentKeyValueStore("kv"), Serdes.String(), Serdes.String())
                .withLoggingDisabled().build();
        kv.init(context, kv);
        windows = Stores.windowStoreBuilder(LetheStores.persistentWindowStore("windows", Duration.ofMinutes(1),
                        Duration.ofSeconds(10), false), Serdes.String(), Serdes.String())
                .withLoggingDisabled().build();
        windows.init(context, windows);
        for (int i = 0; i < 5; i++) {
            context.setRecordContext(new ProcessorRecordContext(i * 10_000L, 100 + i, 0, "in", new RecordHeaders()));
            String key = String.valueOf((char) ('a' + i));
            kv.put(key, "v" + key);
            windows.put(key, "w" + key, i * 10_000L);
            windows.put("a", "a" + i, i * 10_000L);
        }
    }

    @AfterEach
    void close() {
        kv.close();
        windows.close();
    }

    @Test
    void keyValueQueriesAnswerUpToThePosition() {
        QueryResult<String> hit = kv.query(KeyQuery.withKey("c"), PositionBound.unbounded(), CONFIG);
        assertTrue(hit.isSuccess(), hit.toString());
        assertEquals("vc", hit.getResult());
        assertEquals(Position.fromMap(Map.of("in", Map.of(0, 104L))), hit.getPosition());

        QueryResult<KeyValueIterator<String, String>> range =
                kv.query(RangeQuery.withRange("b", "d"), PositionBound.unbounded(), CONFIG);
        assertEquals(List.of("b=vb", "c=vc", "d=vd"), drain(range.getResult()));

        QueryResult<String> behind = kv.query(KeyQuery.withKey("c"),
                PositionBound.at(Position.fromMap(Map.of("in", Map.of(0, 200L)))), CONFIG);
        assertFalse(behind.isSuccess());
        assertEquals(FailureReason.NOT_UP_TO_BOUND, behind.getFailureReason());
        QueryResult<String> reached = kv.query(KeyQuery.withKey("c"),
                PositionBound.at(Position.fromMap(Map.of("in", Map.of(0, 104L)))), CONFIG);
        assertTrue(reached.isSuccess());
    }

    @Test
    void windowQueriesAnswerByKeyAndByTime() {
        QueryResult<WindowStoreIterator<String>> byKey = windows.query(
                WindowKeyQuery.withKeyAndWindowStartRange("a", Instant.ofEpochMilli(10_000),
                        Instant.ofEpochMilli(30_000)), PositionBound.unbounded(), CONFIG);
        assertTrue(byKey.isSuccess(), byKey.toString());
        List<String> found = new ArrayList<>();
        try (WindowStoreIterator<String> it = byKey.getResult()) {
            it.forEachRemaining(e -> found.add(e.key + "=" + e.value));
        }
        assertEquals(List.of("10000=a1", "20000=a2", "30000=a3"), found);

        QueryResult<KeyValueIterator<Windowed<String>, String>> byTime = windows.query(
                WindowRangeQuery.withWindowStartRange(Instant.ofEpochMilli(20_000), Instant.ofEpochMilli(30_000)),
                PositionBound.unbounded(), CONFIG);
        assertTrue(byTime.isSuccess(), byTime.toString());
        List<String> all = new ArrayList<>();
        try (KeyValueIterator<Windowed<String>, String> it = byTime.getResult()) {
            it.forEachRemaining(e -> all.add(e.key.key() + "@" + e.key.window().start() + "=" + e.value));
        }
        all.sort(null);
        assertEquals(List.of("a@20000=a2", "a@30000=a3", "c@20000=wc", "d@30000=wd"), all);
    }

    private static List<String> drain(KeyValueIterator<String, String> it) {
        List<String> out = new ArrayList<>();
        try (it) {
            while (it.hasNext()) {
                KeyValue<String, String> e = it.next();
                out.add(e.key + "=" + e.value);
            }
        }
        return out;
    }

    /**
     * The timestamped forms on timestamped stores: {@code TimestampedKeyQuery} and {@code
     * TimestampedRangeQuery} give each value with its timestamp, {@code KeyQuery} and {@code RangeQuery}
     * the value alone; ranges come in either order; window queries give values with timestamps.
     */
    @Test
    void timestampedQueriesGiveTimestampsWhereAsked() {
        TimestampedKeyValueStore<String, String> tkv = Stores.timestampedKeyValueStoreBuilder(
                LetheStores.persistentTimestampedKeyValueStore("tkv"), Serdes.String(), Serdes.String())
                .withLoggingDisabled().build();
        tkv.init(context, tkv);
        TimestampedWindowStore<String, String> tw = Stores.timestampedWindowStoreBuilder(
                LetheStores.persistentTimestampedWindowStore("tw", Duration.ofMinutes(1), Duration.ofSeconds(10),
                        false), Serdes.String(), Serdes.String()).withLoggingDisabled().build();
        tw.init(context, tw);
        try {
            for (int i = 0; i < 4; i++) {
                context.setRecordContext(new ProcessorRecordContext(i, 200 + i, 0, "in", new RecordHeaders()));
                String key = String.valueOf((char) ('a' + i));
                tkv.put(key, ValueAndTimestamp.make("v" + key, 1_000L * i));
                tw.put("k", ValueAndTimestamp.make("w" + i, 500L + i), i * 10_000L);
            }
            assertEquals(ValueAndTimestamp.make("vb", 1_000L),
                    tkv.query(TimestampedKeyQuery.withKey("b"), PositionBound.unbounded(), CONFIG).getResult());
            assertEquals("vb", tkv.query(KeyQuery.withKey("b"), PositionBound.unbounded(), CONFIG).getResult());

            List<String> timestamped = new ArrayList<>();
            try (KeyValueIterator<String, ValueAndTimestamp<String>> it = tkv.query(
                    TimestampedRangeQuery.<String, String>withRange("b", "d").withDescendingKeys(),
                    PositionBound.unbounded(), CONFIG).getResult()) {
                it.forEachRemaining(e -> timestamped.add(e.key + "=" + e.value.value() + "@" + e.value.timestamp()));
            }
            assertEquals(List.of("d=vd@3000", "c=vc@2000", "b=vb@1000"), timestamped);
            assertEquals(List.of("a=va", "b=vb"), drain(tkv.query(RangeQuery.<String, String>withUpperBound("b"),
                    PositionBound.unbounded(), CONFIG).getResult()));

            List<String> windowed = new ArrayList<>();
            try (WindowStoreIterator<ValueAndTimestamp<String>> it = tw.query(
                    WindowKeyQuery.<String, ValueAndTimestamp<String>>withKeyAndWindowStartRange("k",
                            Instant.ofEpochMilli(10_000), Instant.ofEpochMilli(20_000)),
                    PositionBound.unbounded(), CONFIG).getResult()) {
                it.forEachRemaining(e -> windowed.add(e.key + "=" + e.value.value() + "@" + e.value.timestamp()));
            }
            assertEquals(List.of("10000=w1@501", "20000=w2@502"), windowed);
        } finally {
            tkv.close();
            tw.close();
        }
    }
}
