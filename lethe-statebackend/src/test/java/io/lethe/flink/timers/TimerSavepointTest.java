package io.lethe.flink.timers;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.lethe.flink.LetheOptions;
import io.lethe.flink.LetheStateBackend;
import io.lethe.flink.testing.TestCheckpoints;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.flink.runtime.operators.testutils.MockEnvironment;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.runtime.state.KeyGroupedInternalPriorityQueue;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.KeyedStateBackendParametersImpl;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;
import org.apache.flink.streaming.api.operators.TimerHeapInternalTimer;
import org.apache.flink.streaming.api.operators.TimerSerializer;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Timers kept in the engine travel in canonical savepoints: to the HashMap backend and back, and
 * into Lethe at another parallelism, with the fired ones left out.
 */
class TimerSavepointTest {
    private static final int MAX_PARALLELISM = 128;
    private static final KeyGroupRange ALL = KeyGroupRange.of(0, MAX_PARALLELISM - 1);
    private static final TimerSerializer<Integer, VoidNamespace> SERIALIZER =
            new TimerSerializer<>(IntSerializer.INSTANCE, VoidNamespaceSerializer.INSTANCE);

    @TempDir
    Path dir;

    private MockEnvironment env;
    private TestCheckpoints snapshots;
    private final List<AbstractKeyedStateBackend<Integer>> backends = new ArrayList<>();

    @BeforeEach
    void setUp() throws Exception {
        env = MockEnvironment.builder().build();
        snapshots = new TestCheckpoints(dir);
    }

    @AfterEach
    void tearDown() throws Exception {
        backends.forEach(AbstractKeyedStateBackend::dispose);
        env.close();
    }

    private AbstractKeyedStateBackend<Integer> backend(StateBackend kind, KeyGroupRange range,
            Collection<KeyedStateHandle> handles) throws Exception {
        AbstractKeyedStateBackend<Integer> b = (AbstractKeyedStateBackend<Integer>) kind.createKeyedStateBackend(
                new KeyedStateBackendParametersImpl<>(env, new JobID(), "savepoint-test", IntSerializer.INSTANCE,
                        MAX_PARALLELISM, range, env.getTaskKvStateRegistry(), TtlTimeProvider.DEFAULT,
                        new UnregisteredMetricsGroup(), handles, new CloseableRegistry()));
        backends.add(b);
        return b;
    }

    private static StateBackend lethe() {
        return new LetheStateBackend().with(LetheOptions.USE_MANAGED_MEMORY, false);
    }

    private static KeyGroupedInternalPriorityQueue<TimerHeapInternalTimer<Integer, VoidNamespace>> timers(
            AbstractKeyedStateBackend<Integer> b) {
        return b.create("_timer_state/event_user-timers", SERIALIZER);
    }

    private static Set<TimerHeapInternalTimer<Integer, VoidNamespace>> drain(
            KeyGroupedInternalPriorityQueue<TimerHeapInternalTimer<Integer, VoidNamespace>> q) {
        Set<TimerHeapInternalTimer<Integer, VoidNamespace>> all = new HashSet<>();
        long last = Long.MIN_VALUE;
        for (TimerHeapInternalTimer<Integer, VoidNamespace> t; (t = q.poll()) != null; ) {
            assertEquals(true, t.getTimestamp() >= last, "in time order");
            last = t.getTimestamp();
            assertEquals(true, all.add(t), "fired twice: " + t);
        }
        return all;
    }

    @Test
    void engineTimersMoveToTheHashMapBackendAndBackWithoutTheFiredOnes() throws Exception {
        AbstractKeyedStateBackend<Integer> source = backend(lethe(), ALL, List.of());
        KeyGroupedInternalPriorityQueue<TimerHeapInternalTimer<Integer, VoidNamespace>> q = timers(source);
        Set<TimerHeapInternalTimer<Integer, VoidNamespace>> pending = new HashSet<>();
        for (int k = 0; k < 2000; k++) {
            TimerHeapInternalTimer<Integer, VoidNamespace> t = new TimerHeapInternalTimer<>(100 + k % 30, k,
                    VoidNamespace.INSTANCE);
            q.add(t);
            pending.add(t);
        }
        for (int i = 0; i < 700; i++) {
            pending.remove(q.poll()); // up to the middle of one timestamp
        }
        TimerHeapInternalTimer<Integer, VoidNamespace> late = new TimerHeapInternalTimer<>(50, 7, VoidNamespace.INSTANCE);
        q.add(late);
        pending.add(late);

        KeyedStateHandle savepoint = snapshots.takeCanonicalSavepoint(source, 1);
        AbstractKeyedStateBackend<Integer> heap = backend(new HashMapStateBackend(), ALL, List.of(savepoint));
        KeyGroupedInternalPriorityQueue<TimerHeapInternalTimer<Integer, VoidNamespace>> onHeap = timers(heap);
        assertEquals(pending.size(), onHeap.size());

        KeyedStateHandle back = snapshots.takeCanonicalSavepoint(heap, 2);
        KeyGroupRange half = KeyGroupRange.of(0, 63);
        AbstractKeyedStateBackend<Integer> restored = backend(lethe(), half, List.of(back.getIntersection(half)));
        Set<TimerHeapInternalTimer<Integer, VoidNamespace>> expected = pending.stream()
                .filter(t -> half.contains(KeyGroupRangeAssignment.assignToKeyGroup(t.getKey(), MAX_PARALLELISM)))
                .collect(Collectors.toSet());
        assertEquals(expected, drain(timers(restored)));
        assertEquals(pending, drain(onHeap));
    }
}
