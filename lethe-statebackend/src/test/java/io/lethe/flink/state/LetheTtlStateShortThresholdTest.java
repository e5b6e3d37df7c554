package io.lethe.flink.state;

import io.lethe.flink.LetheKeyedStateBackend;
import io.lethe.flink.LetheOptions;

import org.apache.flink.api.common.state.State;
import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.api.common.state.StateTtlConfig;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.ttl.StateBackendTestContext;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;
import org.apache.flink.util.FlinkRuntimeException;
import org.junit.jupiter.api.AfterAll;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Flink's TTL conformance suite with horizons that move during the tests: a delete persistence
 * threshold of one second, and the horizon of every TTL state advanced to the mocked clock's now
 * whenever a test switches keys or takes a snapshot, so expired entries leave the engine between
 * the suite's writes and reads, as they do in a running job.
 *
 * <p>The suite turns TTL cleanup in background off for most of its states, and Lethe then keeps
 * the horizon still (as RocksDB skips its compaction filter): this run turns it back on, so the
 * horizons move under every state kind, update type and visibility.
 *
 * <p>The horizons move only at those points: the backend's own timer reads a clock that stands at
 * 0, so no move lands between a test's clock step and its next read, which Flink allows to return
 * the expired value ({@code ReturnExpiredIfNotCleanedUp}) and the suite expects to.
 */
class LetheTtlStateShortThresholdTest extends LetheTtlStateTest {
    private static final AtomicLong HORIZON_MOVES = new AtomicLong();

    @Override
    protected StateBackendTestContext createStateBackendTestContext(TtlTimeProvider timeProvider) {
        return new StateBackendTestContext(onTheTaskThreadOnly(timeProvider)) {
            @Override
            protected StateBackend createStateBackend() {
                return backend().with(LetheOptions.DELETE_PERSISTENCE_THRESHOLD, Duration.ofSeconds(1));
            }

            @Override
            public void setCurrentKey(String key) {
                advanceHorizons(this);
                super.setCurrentKey(key);
            }

            @Override
            public <N, S extends State, V> S createState(StateDescriptor<S, V> desc, N namespace) throws Exception {
                StateTtlConfig ttl = desc.getTtlConfig();
                if (ttl.isEnabled() && !ttl.getCleanupStrategies().inRocksdbCompactFilter()) {
                    desc.enableTimeToLive(StateTtlConfig.newBuilder(ttl.getTimeToLive())
                            .setUpdateType(ttl.getUpdateType())
                            .setStateVisibility(ttl.getStateVisibility())
                            .build());
                }
                return super.createState(desc, namespace);
            }

            @Override
            public KeyedStateHandle takeSnapshot() throws Exception {
                advanceHorizons(this);
                return super.takeSnapshot();
            }
        };
    }

    /** The mocked clock for the task thread; 0 for the backend's expiry timer. */
    private static TtlTimeProvider onTheTaskThreadOnly(TtlTimeProvider clock) {
        return () -> Thread.currentThread().getName().startsWith("lethe-expiry") ? 0 : clock.currentTimestamp();
    }

    private static void advanceHorizons(StateBackendTestContext context) {
        if (context.getKeyedStateBackend() instanceof LetheKeyedStateBackend<?> lethe) {
            try {
                HORIZON_MOVES.addAndGet(lethe.expiryDriver().advance());
            } catch (Exception e) {
                throw new FlinkRuntimeException("Could not advance the horizons", e);
            }
        }
    }

    /** Without a horizon move the run would test nothing beyond {@link LetheTtlStateTest}. */
    @AfterAll
    static void horizonsMoved() {
        System.out.println("horizon moves during the suite: " + HORIZON_MOVES.get());
        assertTrue(HORIZON_MOVES.get() > 0, "no horizon moved during the suite");
    }
}
