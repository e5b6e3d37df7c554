package io.lethe.flink.async;

import static org.assertj.core.api.Assertions.assertThat;

import io.lethe.flink.LetheOptions;
import io.lethe.flink.LetheStateBackendTest;

import org.apache.flink.api.common.state.v2.MapState;
import org.apache.flink.api.common.state.v2.MapStateDescriptor;
import org.apache.flink.api.common.state.v2.ValueState;
import org.apache.flink.api.common.state.v2.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.BasicTypeInfo;
import org.apache.flink.api.common.typeutils.SimpleTypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.runtime.asyncprocessing.RecordContext;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The engine work of a batch runs on the request pipeline's thread, not the task thread: point
 * reads are decoded there with serializers of its own, the executor reports itself fully loaded
 * while batches wait, and a request that must run on the task thread waits for the batches before
 * it. A gate in a value's serializer holds the pipeline's thread inside a batch.
 */
class RequestPipelineTest {
    private AsyncBackendHarness harness;
    private ValueState<Integer> gated;
    private MapState<Integer, String> map;

    /** Opens the backend with batches up to {@code inlineBatchSize} served by the task thread when nothing is in flight. */
    private void open(int inlineBatchSize) throws Exception {
        GateSerializer.reset();
        harness = new AsyncBackendHarness(LetheStateBackendTest.smallBackend(false)
                .with(LetheOptions.ASYNC_STATE_EXECUTOR, true)
                .with(LetheOptions.ASYNC_STATE_INLINE_BATCH_SIZE, inlineBatchSize), TtlTimeProvider.DEFAULT, 1000);
        gated = harness.state(new ValueStateDescriptor<>("gated", new GateSerializer()));
        map = harness.state(new MapStateDescriptor<>("map", BasicTypeInfo.INT_TYPE_INFO, BasicTypeInfo.STRING_TYPE_INFO));
        harness.forEachKey(4, k -> gated.asyncUpdate(k == 0 ? GateSerializer.GATED : k));
    }

    @AfterEach
    void close() throws Exception {
        GateSerializer.gate.countDown();
        if (harness != null) {
            harness.close();
        }
    }

    @Test
    void pointReadsAreDecodedOnThePipelinesThreadWithSerializersOfItsOwn() throws Exception {
        open(0);
        GateSerializer.readThreads.clear();
        Map<Integer, Integer> seen = new ConcurrentHashMap<>();
        harness.forEachKey(4, k -> gated.asyncValue().thenAccept(v -> seen.put(k, v)));

        assertThat(harness.failures).isEmpty();
        assertThat(seen).containsEntry(0, GateSerializer.GATED).containsEntry(3, 3).hasSize(4);
        assertThat(GateSerializer.readThreads).isNotEmpty().doesNotContain(Thread.currentThread());
        assertThat(GateSerializer.writeThreads).containsExactly(Thread.currentThread());
        assertThat(Collections.disjoint(GateSerializer.readers, GateSerializer.writers))
                .as("the reading serializer is a duplicate of the writing one").isTrue();
    }

    @Test
    void aSmallBatchIsServedOnTheTaskThreadWhenNothingIsInFlight() throws Exception {
        open(10);
        GateSerializer.readThreads.clear();
        Map<Integer, Integer> seen = new ConcurrentHashMap<>();
        harness.issueForEachKey(4, k -> gated.asyncValue().thenAccept(v -> seen.put(k, v)));
        harness.aec.triggerIfNeeded(true);
        harness.awaitServed();

        assertThat(seen).containsEntry(0, GateSerializer.GATED).containsEntry(3, 3).hasSize(4);
        assertThat(GateSerializer.readThreads).containsExactly(Thread.currentThread());
    }

    @Test
    void aSmallBatchWaitsBehindABatchInFlight() throws Exception {
        open(2);
        GateSerializer.close();
        RecordContext<Integer> record = harness.aec.buildContext(0, 0);
        record.retain();
        harness.aec.setCurrentContext(record);
        List<Object> results = Collections.synchronizedList(new ArrayList<>());
        // Three requests: the pipeline serves them, and waits at the gate before the put is written.
        gated.asyncValue().thenAccept(results::add);
        map.asyncPut(1, "one");
        gated.asyncValue().thenAccept(results::add);
        harness.aec.triggerIfNeeded(true);
        assertThat(GateSerializer.arrived.await(10, TimeUnit.SECONDS)).as("the pipeline reached the gate").isTrue();
        // One request, small enough for the task thread, but it must see the put: it queues behind.
        map.asyncGet(1).thenAccept(results::add);
        harness.aec.triggerIfNeeded(true);
        GateSerializer.gate.countDown();
        record.release();
        harness.aec.drainInflightRecords(0);

        assertThat(harness.failures).isEmpty();
        assertThat(results).containsExactly(GateSerializer.GATED, GateSerializer.GATED, "one");
    }

    @Test
    void aRequestServedOnTheTaskThreadWaitsForTheBatchesBeforeIt() throws Exception {
        open(0);
        GateSerializer.close();
        RecordContext<Integer> record = harness.aec.buildContext(0, 0);
        record.retain();
        harness.aec.setCurrentContext(record);
        // A batch that puts an entry and reads the gated value: its thread waits at the gate.
        List<Object> results = Collections.synchronizedList(new ArrayList<>());
        map.asyncPut(1, "one");
        gated.asyncValue().thenAccept(results::add);
        harness.aec.triggerIfNeeded(true);
        assertThat(GateSerializer.arrived.await(10, TimeUnit.SECONDS)).as("the pipeline reached the gate").isTrue();
        gated.asyncValue().thenAccept(results::add);
        harness.aec.triggerIfNeeded(true);
        assertThat(harness.executor.fullyLoaded()).as("one batch running and one waiting").isTrue();

        // The iteration runs on this thread: it must wait for the put, which waits for the gate.
        Thread opener = new Thread(() -> {
            sleep(200);
            GateSerializer.gate.countDown();
        });
        opener.start();
        List<String> entries = Collections.synchronizedList(new ArrayList<>());
        map.asyncEntries().thenAccept(it -> it.onNext(e -> {
            entries.add(e.getKey() + "=" + e.getValue());
        }));
        harness.aec.triggerIfNeeded(true);
        record.release();
        harness.aec.drainInflightRecords(0);
        opener.join();

        assertThat(harness.failures).isEmpty();
        assertThat(entries).containsExactly("1=one");
        assertThat(results).containsExactly(GateSerializer.GATED, GateSerializer.GATED);
        assertThat(harness.executor.fullyLoaded()).isFalse();
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Integers whose reads of {@link #GATED} wait at a gate, noting the threads and instances that read and write. */
    static final class GateSerializer extends WatchedIntSerializer {
        static final int GATED = 77;
        static volatile CountDownLatch gate = new CountDownLatch(0);
        static volatile CountDownLatch arrived = new CountDownLatch(1);
        static final Set<Thread> readThreads = ConcurrentHashMap.newKeySet();
        static final Set<Thread> writeThreads = ConcurrentHashMap.newKeySet();
        static final Set<Object> readers = Collections.newSetFromMap(new IdentityHashMap<>());
        static final Set<Object> writers = Collections.newSetFromMap(new IdentityHashMap<>());

        static void reset() {
            gate = new CountDownLatch(0);
            arrived = new CountDownLatch(1);
            readThreads.clear();
            writeThreads.clear();
            synchronized (readers) {
                readers.clear();
                writers.clear();
            }
        }

        static void close() {
            gate = new CountDownLatch(1);
        }

        @Override
        public GateSerializer duplicate() {
            return new GateSerializer();
        }

        @Override
        void written(int value) {
            writeThreads.add(Thread.currentThread());
            synchronized (readers) {
                writers.add(this);
            }
        }

        @Override
        int read(int value) throws IOException {
            readThreads.add(Thread.currentThread());
            synchronized (readers) {
                readers.add(this);
            }
            if (value == GATED) {
                arrived.countDown();
                try {
                    gate.await();
                } catch (InterruptedException e) {
                    throw new IOException(e);
                }
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
                super(GateSerializer::new);
            }
        }
    }
}
