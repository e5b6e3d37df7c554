package io.lethe.flink.async;

import static org.assertj.core.api.Assertions.assertThat;

import io.lethe.flink.LetheKeyedStateBackend;
import io.lethe.flink.LetheOptions;
import io.lethe.flink.LetheStateBackend;
import io.lethe.flink.testing.FileEntries;
import io.lethe.flink.testing.TtlClock;

import org.apache.flink.api.common.state.StateTtlConfig;
import org.apache.flink.api.common.state.v2.ListState;
import org.apache.flink.api.common.state.v2.ListStateDescriptor;
import org.apache.flink.api.common.state.v2.MapState;
import org.apache.flink.api.common.state.v2.MapStateDescriptor;
import org.apache.flink.api.common.state.v2.StateDescriptor;
import org.apache.flink.api.common.state.v2.ValueState;
import org.apache.flink.api.common.state.v2.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.BasicTypeInfo;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.MemorySize;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * State TTL of asynchronous state (Flink's State V2 TTL wrappers) through Lethe's executor: values
 * carry Flink's TTL timestamps as delete keys, and the horizon follows the TTL clock, so expired
 * entries leave the files within D_th without a write from the task and without tombstones, while
 * the live ones still read.
 */
class AsyncTtlExpiryTest {
    private static final int KEYS = 2_000;
    private static final long TTL_MS = 1_000;
    private static final Duration THRESHOLD = Duration.ofSeconds(1);

    @Test
    void expiredAsynchronousStateLeavesTheFilesWithinTheThresholdWithoutTombstones() throws Exception {
        TtlClock clock = new TtlClock();
        LetheStateBackend kind = new LetheStateBackend()
                .with(LetheOptions.USE_MANAGED_MEMORY, false)
                .with(LetheOptions.ASYNC_STATE_EXECUTOR, true)
                .with(LetheOptions.DELETE_PERSISTENCE_THRESHOLD, THRESHOLD)
                .with(LetheOptions.PAGES_PER_TILE, "4")
                .with(LetheOptions.PAGE_SIZE, MemorySize.parse("1kb"))
                .with(CheckpointingOptions.INCREMENTAL_CHECKPOINTS, false);
        try (AsyncBackendHarness h = new AsyncBackendHarness(kind, clock, 500)) {
            ValueState<Integer> value = h.state(withTtl(new ValueStateDescriptor<>("value", BasicTypeInfo.INT_TYPE_INFO)));
            ListState<Integer> list = h.state(withTtl(new ListStateDescriptor<>("list", BasicTypeInfo.INT_TYPE_INFO)));
            MapState<Integer, Integer> map = h.state(withTtl(
                    new MapStateDescriptor<>("map", BasicTypeInfo.INT_TYPE_INFO, BasicTypeInfo.INT_TYPE_INFO)));
            LetheKeyedStateBackend<Integer> storage = (LetheKeyedStateBackend<Integer>) h.backend.storage();
            assertThat(storage.expiryOf("value").status()).startsWith("active");

            // The first half written now, the second half half a TTL later.
            h.forEachKey(KEYS / 2, k -> write(value, list, map, k));
            clock.now += TTL_MS / 2;
            h.forEachKey(KEYS, k -> {
                if (k >= KEYS / 2) {
                    write(value, list, map, k);
                }
            });
            storage.db().flush();
            assertThat(FileEntries.entries(storage.db().statistics())).isEqualTo(3L * KEYS);

            // The first half has expired (list appends round their delete keys up by at most D_th / 20).
            clock.now += TTL_MS - TTL_MS / 2 + THRESHOLD.toMillis() / 20;
            long gone = FileEntries.awaitEntries(storage.db(), 3L * (KEYS - KEYS / 2), THRESHOLD.toMillis() + 3_000);
            assertThat(gone).as("ms until the expired entries left").isLessThanOrEqualTo(THRESHOLD.toMillis() + 1_000);
            assertThat(FileEntries.tombstones(storage.db().statistics())).as("tombstones").isZero();

            Map<Integer, Integer> live = new ConcurrentHashMap<>();
            h.forEachKey(KEYS, k -> value.asyncValue().thenAccept(v -> {
                if (v != null) {
                    live.put(k, v);
                }
            }));
            assertThat(h.failures).isEmpty();
            assertThat(live).hasSize(KEYS - KEYS / 2).allSatisfy((k, v) -> assertThat(v).isEqualTo(k));
        }
    }

    private static void write(ValueState<Integer> value, ListState<Integer> list, MapState<Integer, Integer> map,
            int k) {
        value.asyncUpdate(k);
        list.asyncAdd(k);
        map.asyncPut(k, k);
    }

    private static <D extends StateDescriptor<?>> D withTtl(D descriptor) {
        descriptor.enableTimeToLive(StateTtlConfig.newBuilder(Duration.ofMillis(TTL_MS))
                .setUpdateType(StateTtlConfig.UpdateType.OnCreateAndWrite).neverReturnExpired().build());
        return descriptor;
    }
}
