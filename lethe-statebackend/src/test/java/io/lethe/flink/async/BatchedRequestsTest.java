package io.lethe.flink.async;

import static org.assertj.core.api.Assertions.assertThat;

import io.lethe.flink.RecordingMetricGroup;
import io.lethe.flink.LetheOptions;
import io.lethe.flink.LetheStateBackendTest;

import org.apache.flink.api.common.state.v2.ListState;
import org.apache.flink.api.common.state.v2.ListStateDescriptor;
import org.apache.flink.api.common.state.v2.MapState;
import org.apache.flink.api.common.state.v2.MapStateDescriptor;
import org.apache.flink.api.common.state.v2.ReducingState;
import org.apache.flink.api.common.state.v2.ReducingStateDescriptor;
import org.apache.flink.api.common.state.v2.StateIterator;
import org.apache.flink.api.common.state.v2.ValueState;
import org.apache.flink.api.common.state.v2.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.BasicTypeInfo;
import org.apache.flink.api.common.typeutils.SimpleTypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.Metric;
import org.apache.flink.runtime.asyncprocessing.AbstractStateIterator;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The executor answers the point reads of a batch together, one multi-get per column family, and
 * still serves every request as if in the order the operator issued it: a read issued before a
 * write of its key sees the old value, one issued after sees the new one, also for reads and
 * writes of one record in one batch; a read that fails fails its request, and only its request; a
 * map is iterated in chunks.
 */
class BatchedRequestsTest {
    private static final int KEYS = 200;
    private static final int BATCH = 1000;

    private AsyncBackendHarness harness;
    private LetheAsyncKeyedStateBackend<Integer> backend;
    private List<Throwable> failures;
    private ValueState<Integer> value;
    private MapState<Integer, String> map;
    private ListState<Integer> list;
    private ReducingState<Integer> sum;
    private final Map<String, Metric> gauges = new HashMap<>();

    @BeforeEach
    void open() throws Exception {
        harness = new AsyncBackendHarness(LetheStateBackendTest.smallBackend(false)
                .with(LetheOptions.ASYNC_STATE_EXECUTOR, true).with(LetheOptions.ASYNC_STATE_INLINE_BATCH_SIZE, inlineBatchSize()),
                TtlTimeProvider.DEFAULT, BATCH, new RecordingMetricGroup("", gauges));
        backend = harness.backend;
        failures = harness.failures;
        value = harness.state(new ValueStateDescriptor<>("value", BasicTypeInfo.INT_TYPE_INFO));
        map = harness.state(new MapStateDescriptor<>("map", BasicTypeInfo.INT_TYPE_INFO, BasicTypeInfo.STRING_TYPE_INFO));
        list = harness.state(new ListStateDescriptor<>("list", BasicTypeInfo.INT_TYPE_INFO));
        sum = harness.state(new ReducingStateDescriptor<>("sum", Integer::sum, BasicTypeInfo.INT_TYPE_INFO));
    }

    /** Batches up to this size are served by the task thread itself: here none, every batch goes to the pipeline. */
    int inlineBatchSize() {
        return 0;
    }

    @AfterEach
    void close() throws Exception {
        harness.close();
    }

    @Test
    void pointReadsOfABatchAreOneMultiGetPerColumnFamilyAndItsWritesOneWriteBatch() throws Exception {
        long[] start = backend.batchCounts();
        harness.forEachKey(KEYS, k -> {
            value.asyncUpdate(k);
            map.asyncPut(k, "v" + k);
            list.asyncAdd(k);
            sum.asyncAdd(k);
            sum.asyncAdd(1);
        });
        long[] before = backend.batchCounts();
        // 5 x 200 requests make one batch of 1,000; the accumulator's adds read what they change.
        assertThat(before[2] - start[2]).as("write batches").isEqualTo(1);
        assertThat(before[3] - start[3]).as("entries written in batches").isEqualTo(3L * KEYS);
        Map<Integer, List<Object>> seen = new TreeMap<>();
        harness.forEachKey(KEYS, k -> {
            List<Object> results = Collections.synchronizedList(new ArrayList<>(List.of("", "", "", "", "")));
            seen.put(k, results);
            value.asyncValue().thenAccept(v -> results.set(0, v));
            map.asyncGet(k).thenAccept(v -> results.set(1, v));
            map.asyncContains(k + 1).thenAccept(v -> results.set(2, v));
            list.asyncGet().thenAccept(it -> results.set(3, elements(it)));
            sum.asyncGet().thenAccept(v -> results.set(4, v));
        });
        long[] after = backend.batchCounts();

        assertThat(failures).isEmpty();
        for (int k = 0; k < KEYS; k++) {
            assertThat(seen.get(k)).as("key " + k).containsExactly(k, "v" + k, false, List.of(k), k + 1);
        }
        assertThat(after[1] - before[1]).as("reads answered in batches").isEqualTo(5L * KEYS);
        // One batch of 1,000 again: one multi-get for each of the 4 column families.
        assertThat(after[0] - before[0]).as("multi-gets").isEqualTo(4);
        assertThat(gauge("multi-gets")).isEqualTo(after[0]);
        assertThat(gauge("multi-get-reads")).isEqualTo(after[1]);
        assertThat(gauge("write-batch-entries")).isEqualTo(after[3]);
        // Two batches of 1,000 requests, each handed over unless the task thread serves every batch.
        assertThat(gauge("batches")).isEqualTo(2L);
        assertThat(gauge("requests")).isEqualTo(10L * KEYS);
        assertThat(gauge("batches-handed-over")).isEqualTo(inlineBatchSize() >= BATCH ? 0L : 2L);
        assertThat(gauge("batches-in-flight")).isEqualTo(0);
    }

    private Object gauge(String name) {
        Metric metric = gauges.get(ExecutorMetrics.GROUP + "." + name);
        assertThat(metric).as(name + " among " + gauges.keySet()).isNotNull();
        return ((Gauge<?>) metric).getValue();
    }

    @Test
    void aBatchServesReadsAndWritesOfAKeyInTheOrderTheyWereIssued() throws Exception {
        harness.forEachKey(KEYS, k -> {
            value.asyncUpdate(k);
            map.asyncPut(k, "old");
        });
        Map<Integer, List<Object>> seen = new TreeMap<>();
        harness.forEachKey(KEYS, k -> {
            List<Object> results = Collections.synchronizedList(new ArrayList<>(List.of("", "", "", "", "", "")));
            seen.put(k, results);
            // Unchained requests of one record: all in one batch, in this order.
            value.asyncValue().thenAccept(v -> results.set(0, v));
            value.asyncUpdate(k + 1000);
            value.asyncValue().thenAccept(v -> results.set(1, v));
            map.asyncGet(k).thenAccept(v -> results.set(2, v));
            map.asyncPut(k, "new");
            map.asyncGet(k).thenAccept(v -> results.set(3, v));
            map.asyncRemove(k);
            map.asyncContains(k).thenAccept(v -> results.set(4, v));
            value.asyncClear();
            value.asyncValue().thenAccept(v -> results.set(5, v == null ? "none" : v));
        });

        assertThat(failures).isEmpty();
        for (int k = 0; k < KEYS; k++) {
            assertThat(seen.get(k)).as("key " + k).containsExactly(k, k + 1000, "old", "new", false, "none");
        }
    }

    @Test
    void aMapIsIteratedInChunksThatTogetherHoldEveryEntryOnceInKeyOrder() throws Exception {
        int keys = 10;
        int entries = 300;
        harness.forEachKey(keys, k -> {
            for (int u = 0; u < entries; u++) {
                map.asyncPut(u, k + ":" + u);
            }
        });
        Map<Integer, List<String>> seen = new TreeMap<>();
        Map<Integer, List<Object>> userKeys = new TreeMap<>();
        Map<Integer, Integer> firstChunk = new TreeMap<>();
        harness.forEachKey(keys, k -> {
            List<String> mine = Collections.synchronizedList(new ArrayList<>());
            List<Object> mineKeys = Collections.synchronizedList(new ArrayList<>());
            seen.put(k, mine);
            userKeys.put(k, mineKeys);
            map.asyncEntries().thenAccept(it -> {
                AbstractStateIterator<?> loaded = (AbstractStateIterator<?>) it;
                firstChunk.put(k, loaded.hasNextLoading() ? sizeOf(loaded.getCurrentCache()) : -1);
                it.onNext(e -> {
                    mine.add(e.getKey() + "=" + e.getValue());
                });
            });
            map.asyncKeys().thenAccept(it -> it.onNext(u -> {
                mineKeys.add(u);
            }));
        });

        assertThat(failures).isEmpty();
        for (int k = 0; k < keys; k++) {
            List<String> expected = new ArrayList<>();
            List<Object> expectedKeys = new ArrayList<>();
            for (int u = 0; u < entries; u++) {
                expected.add(u + "=" + k + ":" + u);
                expectedKeys.add(u);
            }
            assertThat(seen.get(k)).as("entries of key " + k).isEqualTo(expected);
            assertThat(userKeys.get(k)).as("user keys of key " + k).isEqualTo(expectedKeys);
            assertThat(firstChunk.get(k)).as("first chunk, with more to load").isEqualTo(RequestServer.MAP_CHUNK);
        }
    }

    private static int sizeOf(Iterable<?> elements) {
        int n = 0;
        for (Object ignored : elements) {
            n++;
        }
        return n;
    }

    @Test
    void aReadThatFailsFailsItsRequestAloneAndTheRestOfItsMultiGetIsAnswered() throws Exception {
        ValueState<Integer> picky = harness.state(new ValueStateDescriptor<>("picky", new RefusingSerializer()));
        harness.forEachKey(KEYS, k -> picky.asyncUpdate(k));
        Map<Integer, Object> seen = new TreeMap<>();
        // A failed request's record never finishes (the task fails), so the batch is served without draining.
        harness.issueForEachKey(KEYS, k -> picky.asyncValue().thenAccept(v -> seen.put(k, v)));
        harness.aec.triggerIfNeeded(true);
        harness.awaitServed();

        assertThat(failures).hasSize(1);
        assertThat(failures.get(0)).hasMessage("refused to read " + RefusingSerializer.REFUSED);
        assertThat(seen).hasSize(KEYS - 1).doesNotContainKey(RefusingSerializer.REFUSED);
        seen.forEach((k, v) -> assertThat(v).isEqualTo(k));
    }

    /** Integers, but one of them cannot be read back. */
    static final class RefusingSerializer extends WatchedIntSerializer {
        static final int REFUSED = 77;

        @Override
        int read(int value) throws IOException {
            if (value == REFUSED) {
                throw new IOException("refused to read " + REFUSED);
            }
            return value;
        }

        @Override
        public TypeSerializerSnapshot<Integer> snapshotConfiguration() {
            return new Snapshot();
        }

        /** The snapshot Flink's serializer framework asks for. */
        public static final class Snapshot extends SimpleTypeSerializerSnapshot<Integer> {
            public Snapshot() {
                super(RefusingSerializer::new);
            }
        }
    }

    private static List<Integer> elements(StateIterator<Integer> iterator) {
        List<Integer> out = new ArrayList<>();
        iterator.onNext((Integer e) -> {
            out.add(e);
        });
        return out;
    }
}
