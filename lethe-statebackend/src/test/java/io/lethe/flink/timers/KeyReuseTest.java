package io.lethe.flink.timers;

import io.lethe.flink.LetheOptions;
import io.lethe.flink.LetheStateBackend;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.typeutils.base.IntValueSerializer;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.flink.runtime.operators.testutils.MockEnvironment;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupedInternalPriorityQueue;
import org.apache.flink.runtime.state.KeyedStateBackendParametersImpl;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;
import org.apache.flink.streaming.api.operators.TimerHeapInternalTimer;
import org.apache.flink.streaming.api.operators.TimerSerializer;
import org.apache.flink.types.IntValue;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.List;

/**
 * Whether an operator may reuse a key object once it registered a timer with it (Flink asks the
 * backend through {@code isSafeToReuseKVState}; SQL's window buffers then stop copying keys). Timers
 * in the engine keep serialized rows and hand out new objects, so a key changed afterwards changes
 * no timer; heap timers keep the object itself.
 */
class KeyReuseTest {
    private static final int MAX_PARALLELISM = 128;

    @ParameterizedTest
    @EnumSource(LetheOptions.TimerServiceFactory.class)
    void aKeyChangedAfterItsTimerWasRegisteredChangesTheTimerOnlyOnTheHeap(LetheOptions.TimerServiceFactory timers)
            throws Exception {
        MockEnvironment env = MockEnvironment.builder().build();
        AbstractKeyedStateBackend<IntValue> backend = new LetheStateBackend()
                .with(LetheOptions.USE_MANAGED_MEMORY, false)
                .with(LetheOptions.TIMER_SERVICE_FACTORY, timers)
                .createKeyedStateBackend(new KeyedStateBackendParametersImpl<>(env, new JobID(), "reuse-test",
                        IntValueSerializer.INSTANCE, MAX_PARALLELISM, KeyGroupRange.of(0, MAX_PARALLELISM - 1),
                        env.getTaskKvStateRegistry(), TtlTimeProvider.DEFAULT, new UnregisteredMetricsGroup(),
                        List.of(), new CloseableRegistry()));
        try {
            KeyGroupedInternalPriorityQueue<TimerHeapInternalTimer<IntValue, VoidNamespace>> queue = backend.create(
                    "timers", new TimerSerializer<>(IntValueSerializer.INSTANCE, VoidNamespaceSerializer.INSTANCE));
            IntValue key = new IntValue(7);
            queue.add(new TimerHeapInternalTimer<>(100, key, VoidNamespace.INSTANCE));
            key.setValue(8); // the operator reuses its key object for the next record

            boolean inEngine = timers == LetheOptions.TimerServiceFactory.LETHE;
            assertEquals(inEngine, backend.isSafeToReuseKVState());
            assertEquals(inEngine ? 7 : 8, queue.peek().getKey().getValue(),
                    "the registered timer's key, read after the key object changed");
        } finally {
            backend.dispose();
            env.close();
        }
    }
}
