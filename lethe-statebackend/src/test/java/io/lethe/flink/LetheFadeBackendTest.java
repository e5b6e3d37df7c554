package io.lethe.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lethe.engine.Statistics;
import io.lethe.engine.Ticker;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.flink.runtime.operators.testutils.MockEnvironment;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedStateBackendParametersImpl;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.Collections;

/**
 * FADE through the backend's configuration: state cleared in an idle backend leaves no tombstone in
 * the engine after state.backend.lethe.delete-persistence-threshold (a few times 300 ms here);
 * with the threshold off (0) the tombstones stay, so the test can fail.
 */
class LetheFadeBackendTest {
    private static final Duration THRESHOLD = Duration.ofMillis(300);

    @ParameterizedTest(name = "fade={0}")
    @ValueSource(booleans = {true, false})
    void clearedStateLeavesTheFilesWithinTheThreshold(boolean fade) throws Exception {
        MockEnvironment env = MockEnvironment.builder().build();
        LetheKeyedStateBackend<Integer> backend = (LetheKeyedStateBackend<Integer>) new LetheStateBackend()
                .with(LetheOptions.USE_MANAGED_MEMORY, false)
                .with(LetheOptions.DELETE_PERSISTENCE_THRESHOLD, fade ? THRESHOLD : Duration.ZERO)
                .createKeyedStateBackend(new KeyedStateBackendParametersImpl<>(env, new JobID(), "fade-test",
                        IntSerializer.INSTANCE, 128, KeyGroupRange.of(0, 127), env.getTaskKvStateRegistry(),
                        TtlTimeProvider.DEFAULT, new UnregisteredMetricsGroup(), Collections.emptyList(),
                        new CloseableRegistry()));
        try {
            ValueState<String> state = backend.getPartitionedState(VoidNamespace.INSTANCE,
                    VoidNamespaceSerializer.INSTANCE, new ValueStateDescriptor<>("v", String.class));
            for (int k = 0; k < 2000; k++) {
                backend.setCurrentKey(k);
                state.update("value-" + k);
            }
            backend.db().flush();  // the values are in files: their tombstones must reach them
            for (int k = 0; k < 2000; k += 4) {
                backend.setCurrentKey(k);
                state.clear();
            }
            backend.db().flush();
            assertTrue(tombstones(backend.db().statistics()) > 0, "the clears wrote no tombstone");

            // Idle from here on: only FADE's timer can act. The bound itself is tested in logical
            // time in the engine (fade_bound_test.cc); here the wiring, with room for a slow machine.
            Statistics st = backend.db().statistics();
            long deadline = System.nanoTime() + (fade ? 10_000_000_000L : THRESHOLD.toNanos() * 3);
            while (System.nanoTime() < deadline && !(fade && tombstones(st) == 0)) {
                Thread.sleep(20);
                st = backend.db().statistics();
            }
            if (fade) {
                assertEquals(0, tombstones(st), "tombstones outlived the threshold");
                assertTrue(st.get(Ticker.COMPACTIONS_DELETE_DRIVEN) > 0);
            } else {
                assertTrue(tombstones(st) > 0, "without FADE nothing should have removed them");
            }
            for (int k = 0; k < 8; k++) {
                backend.setCurrentKey(k);
                assertEquals(k % 4 == 0 ? null : "value-" + k, state.value());
            }
        } finally {
            backend.dispose();
            env.close();
        }
    }

    private static long tombstones(Statistics st) {
        return st.columnFamilies().stream().mapToLong(Statistics.ColumnFamily::tombstones).sum();
    }
}
