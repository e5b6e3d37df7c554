package io.lethe.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.StateTtlConfig;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.Metric;
import org.apache.flink.runtime.operators.testutils.MockEnvironment;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedStateBackendParametersImpl;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;
import org.apache.flink.runtime.state.KeyGroupedInternalPriorityQueue;
import org.apache.flink.streaming.api.operators.TimerHeapInternalTimer;
import org.apache.flink.streaming.api.operators.TimerSerializer;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;

/** The backend exposes engine statistics as gauges in its metric group. */
class LetheMetricsTest {

    @Test
    void engineStatisticsAreGauges() throws Exception {
        MockEnvironment env = MockEnvironment.builder().build();
        Map<String, Metric> gauges = new HashMap<>();
        RecordingMetricGroup group = new RecordingMetricGroup("", gauges);
        AbstractKeyedStateBackend<Integer> backend = new LetheStateBackend()
                .with(LetheOptions.USE_MANAGED_MEMORY, false)
                .with(LetheOptions.TIMER_SERVICE_COUNT_PENDING, true)
                .createKeyedStateBackend(new KeyedStateBackendParametersImpl<>(env, new JobID(), "metrics-test",
                        IntSerializer.INSTANCE, 128, KeyGroupRange.of(0, 127),
                        env.getTaskKvStateRegistry(), TtlTimeProvider.DEFAULT, group,
                        Collections.emptyList(), new CloseableRegistry()));
        try {
            ValueState<String> state = backend.getPartitionedState(VoidNamespace.INSTANCE,
                    VoidNamespaceSerializer.INSTANCE, new ValueStateDescriptor<>("v", String.class));
            for (int i = 0; i < 1000; i++) {
                backend.setCurrentKey(i);
                state.update("value-" + i);
            }
            assertTrue(gauges.containsKey("lethe.memtable-bytes"), gauges.keySet().toString());
            assertTrue(gauges.containsKey("lethe.flushes"));
            assertEquals(0L, ((Gauge<?>) gauges.get("lethe.pages-dropped")).getValue());
            long memtable = (Long) ((Gauge<?>) gauges.get("lethe.memtable-bytes")).getValue();
            assertTrue(memtable > 0, "memtable bytes " + memtable);
            assertEquals(0L, ((Gauge<?>) gauges.get("lethe.point-tombstones")).getValue());
            // The process's C heap: the engine's pages and tables come from it.
            long heapInUse = (Long) ((Gauge<?>) gauges.get("lethe.native-heap-in-use-bytes")).getValue();
            long heapFree = (Long) ((Gauge<?>) gauges.get("lethe.native-heap-free-bytes")).getValue();
            assertTrue(heapInUse > 0 && heapFree >= 0, "heap in use " + heapInUse + ", free " + heapFree);
            // Per state: whether expiry through the horizon is active, and why not.
            assertEquals("off: no TTL", ((Gauge<?>) gauges.get("lethe.expiry.v")).getValue());
            ValueStateDescriptor<String> ttl = new ValueStateDescriptor<>("t", String.class);
            ttl.enableTimeToLive(StateTtlConfig.newBuilder(Duration.ofMinutes(1)).build());
            backend.getPartitionedState(VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, ttl);
            String status = (String) ((Gauge<?>) gauges.get("lethe.expiry.t")).getValue();
            assertTrue(status.startsWith("active: TTL 60000 ms"), status);
            assertEquals(0L, ((Gauge<?>) gauges.get("lethe.horizon-advances")).getValue());

            // Per engine timer queue: polls, tombstones, and the engine reads behind them.
            KeyGroupedInternalPriorityQueue<TimerHeapInternalTimer<Integer, VoidNamespace>> timers = backend.create(
                    "_timer_state/event_user-timers",
                    new TimerSerializer<>(IntSerializer.INSTANCE, VoidNamespaceSerializer.INSTANCE));
            // More than the 128 key groups' caches hold (128 each), so polls refill from the engine.
            for (int i = 0; i < 40_000; i++) {
                timers.add(new TimerHeapInternalTimer<>(i, i, VoidNamespace.INSTANCE));
            }
            for (int i = 0; i < 30_000; i++) {
                timers.poll();
            }
            assertEquals(30_000L, ((Gauge<?>) gauges.get("lethe.timers.event_user-timers.polls")).getValue());
            assertEquals(0L, ((Gauge<?>) gauges.get("lethe.timers.event_user-timers.tombstones")).getValue(),
                    "fired timers leave by the horizon");
            long reads = (Long) ((Gauge<?>) gauges.get("lethe.timers.event_user-timers.reads")).getValue();
            long rows = (Long) ((Gauge<?>) gauges.get("lethe.timers.event_user-timers.rows-read")).getValue();
            // Each key group refills with sequential reads of up to 128 rows.
            assertTrue(rows >= 30_000 - 128 * 128 && reads * 128 >= rows, reads + " reads, " + rows + " rows");
            // Fired timers leave without a snapshot too: the expiry driver moves the horizon to the head.
            LetheKeyedStateBackend<Integer> lethe = (LetheKeyedStateBackend<Integer>) backend;
            assertTrue(lethe.expiryDriver().advance() > 0);
            long horizon = lethe.db().horizon(lethe.db().columnFamily("_timer_state/event_user-timers"));
            assertEquals(30_000L ^ Long.MIN_VALUE, horizon, "the head's time, sign bit flipped");
            assertEquals(horizon, ((Gauge<?>) gauges.get("lethe.timers.event_user-timers.horizon")).getValue());
            // Counted exactly (count-pending is on): a pending timer added again, or a removed one that
            // was never there, changes nothing; neither is written.
            timers.add(new TimerHeapInternalTimer<>(39_999, 39_999, VoidNamespace.INSTANCE));
            timers.remove(new TimerHeapInternalTimer<>(50_000, 50_000, VoidNamespace.INSTANCE));
            assertEquals(10_000L, ((Gauge<?>) gauges.get("lethe.timers.event_user-timers.pending")).getValue());
            assertEquals(40_000L, ((Gauge<?>) gauges.get("lethe.timers.event_user-timers.writes")).getValue());
        } finally {
            backend.dispose();
            env.close();
        }
        // After dispose the gauges still answer (the last values), without touching the engine.
        assertTrue((Long) ((Gauge<?>) gauges.get("lethe.memtable-bytes")).getValue() >= 0);
    }
}
