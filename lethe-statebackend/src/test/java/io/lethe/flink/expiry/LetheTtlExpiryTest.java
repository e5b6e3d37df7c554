package io.lethe.flink.expiry;

import io.lethe.engine.Statistics;
import io.lethe.engine.Ticker;
import io.lethe.flink.LetheKeyedStateBackend;
import io.lethe.flink.LetheOptions;
import io.lethe.flink.LetheStateBackend;
import io.lethe.flink.testing.FileEntries;
import io.lethe.flink.testing.TestBackends;
import io.lethe.flink.testing.TestCheckpoints;
import io.lethe.flink.testing.TtlClock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;


import org.apache.flink.api.common.functions.AggregateFunction;
import org.apache.flink.api.common.state.AggregatingState;
import org.apache.flink.api.common.state.AggregatingStateDescriptor;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ReducingState;
import org.apache.flink.api.common.state.ReducingStateDescriptor;
import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.api.common.state.StateTtlConfig;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * TTL state expiring through Lethe's horizons: the same random operations on Lethe and on Flink's
 * HashMap backend under one mocked TTL clock read the same, across flushes, compactions, horizon
 * moves, checkpoints and restores (also onto a clock that stepped back); expired entries leave the
 * files within the delete persistence threshold without one tombstone; and a state whose TTL
 * cleanup is off keeps its data.
 */
class LetheTtlExpiryTest {
    private static final int MAX_PARALLELISM = 128;
    private static final long TTL_MS = 1_000;
    private static final Duration THRESHOLD = Duration.ofSeconds(1);

    @TempDir java.nio.file.Path checkpointDir;
    private final TtlClock clock = new TtlClock();
    private TestBackends backends;
    private TestCheckpoints snapshots;

    @BeforeEach
    void setUp() throws Exception {
        backends = new TestBackends("ttl-test", MAX_PARALLELISM);
        snapshots = new TestCheckpoints(checkpointDir);
    }

    @AfterEach
    void tearDown() throws Exception {
        backends.close();
    }

    private AbstractKeyedStateBackend<Integer> backend(StateBackend kind, Collection<KeyedStateHandle> handles)
            throws Exception {
        return backends.create(kind, clock, handles);
    }

    private static LetheStateBackend lethe() {
        return new LetheStateBackend()
                .with(LetheOptions.USE_MANAGED_MEMORY, false)
                .with(LetheOptions.DELETE_PERSISTENCE_THRESHOLD, THRESHOLD)
                .with(LetheOptions.TTL_PAGES_PER_TILE, "4")
                .with(LetheOptions.PAGE_SIZE, org.apache.flink.configuration.MemorySize.parse("1kb"))
                // Full native checkpoints: a restore needs no shared-state registry.
                .with(CheckpointingOptions.INCREMENTAL_CHECKPOINTS, false);
    }

    private static StateTtlConfig ttl(StateTtlConfig.UpdateType update) {
        return StateTtlConfig.newBuilder(Duration.ofMillis(TTL_MS))
                .setUpdateType(update)
                .neverReturnExpired()
                .build();
    }

    /** One of each state kind, with the same TTL. */
    private static final class States {
        final ValueState<Integer> value;
        final ListState<Integer> list;
        final MapState<Integer, Integer> map;
        final ReducingState<Integer> reducing;
        final AggregatingState<Integer, Long> aggregating;

        States(AbstractKeyedStateBackend<Integer> b, StateTtlConfig ttl) throws Exception {
            value = b.getPartitionedState(VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE,
                    withTtl(new ValueStateDescriptor<>("value", Integer.class), ttl));
            list = b.getPartitionedState(VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE,
                    withTtl(new ListStateDescriptor<>("list", Integer.class), ttl));
            map = b.getPartitionedState(VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE,
                    withTtl(new MapStateDescriptor<>("map", Integer.class, Integer.class), ttl));
            reducing = b.getPartitionedState(VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE,
                    withTtl(new ReducingStateDescriptor<>("reducing", Integer::sum, Integer.class), ttl));
            aggregating = b.getPartitionedState(VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE,
                    withTtl(new AggregatingStateDescriptor<>("aggregating", new Sum(), Long.class), ttl));
        }

        private static <D extends StateDescriptor<?, ?>> D withTtl(D d, StateTtlConfig ttl) {
            d.enableTimeToLive(ttl);
            return d;
        }
    }

    private static final class Sum implements AggregateFunction<Integer, Long, Long> {
        @Override
        public Long createAccumulator() {
            return 0L;
        }

        @Override
        public Long add(Integer value, Long acc) {
            return acc + value;
        }

        @Override
        public Long getResult(Long acc) {
            return acc;
        }

        @Override
        public Long merge(Long a, Long b) {
            return a + b;
        }
    }

    @ParameterizedTest(name = "update={0}")
    @EnumSource(value = StateTtlConfig.UpdateType.class, names = {"OnCreateAndWrite", "OnReadAndWrite"})
    void readsEqualTheHashMapBackendsUnderRandomOperations(StateTtlConfig.UpdateType update) throws Exception {
        long seed = Long.getLong("lethe.ttl.seed", System.nanoTime());
        Random rnd = new Random(seed);
        AbstractKeyedStateBackend<Integer> heap = backend(new HashMapStateBackend(), List.of());
        AbstractKeyedStateBackend<Integer> lethe = backend(lethe(), List.of());
        States h = new States(heap, ttl(update));
        States l = new States(lethe, ttl(update));
        int keys = 200;
        long checkpointId = 0;
        for (int step = 0; step < 30_000; step++) {
            String at = "seed " + seed + ", step " + step;
            if (rnd.nextInt(50) == 0) {
                clock.now += rnd.nextInt(200);
            }
            int op = rnd.nextInt(100);
            if (op < 2) {
                LetheKeyedStateBackend<Integer> b = (LetheKeyedStateBackend<Integer>) lethe;
                switch (rnd.nextInt(3)) {
                    case 0 -> b.expiryDriver().advance();
                    case 1 -> b.db().flush();
                    default -> b.db().compactAll();
                }
                continue;
            }
            if (op == 2 && rnd.nextInt(10) == 0) {
                // Checkpoint (native) or savepoint (canonical) and restore Lethe; the heap backend
                // just goes on.
                KeyedStateHandle handle = checkpoint(lethe, ++checkpointId, rnd.nextBoolean());
                backends.dispose(lethe);
                lethe = backend(lethe(), List.of(handle));
                l = new States(lethe, ttl(update));
                continue;
            }
            int key = rnd.nextInt(keys);
            heap.setCurrentKey(key);
            lethe.setCurrentKey(key);
            int v = rnd.nextInt(1000);
            switch (rnd.nextInt(16)) {
                case 0 -> {
                    h.value.update(v);
                    l.value.update(v);
                }
                case 1 -> assertEquals(h.value.value(), l.value.value(), at);
                case 2 -> {
                    h.value.clear();
                    l.value.clear();
                }
                case 3 -> {
                    h.list.add(v);
                    l.list.add(v);
                }
                case 4 -> {
                    List<Integer> vs = List.of(v, v + 1, v + 2);
                    h.list.addAll(vs);
                    l.list.addAll(vs);
                }
                case 5 -> {
                    List<Integer> vs = List.of(v, -v);
                    h.list.update(vs);
                    l.list.update(vs);
                }
                case 6 -> assertEquals(list(h.list.get()), list(l.list.get()), at);
                case 7 -> {
                    h.list.clear();
                    l.list.clear();
                }
                case 8 -> {
                    h.map.put(v % 10, v);
                    l.map.put(v % 10, v);
                }
                case 9 -> assertEquals(h.map.get(v % 10), l.map.get(v % 10), at);
                case 10 -> {
                    h.map.remove(v % 10);
                    l.map.remove(v % 10);
                }
                case 11 -> assertEquals(map(h.map.entries()), map(l.map.entries()), at);
                case 12 -> {
                    h.reducing.add(v);
                    l.reducing.add(v);
                    h.aggregating.add(v);
                    l.aggregating.add(v);
                }
                case 13 -> {
                    assertEquals(h.reducing.get(), l.reducing.get(), at);
                    assertEquals(h.aggregating.get(), l.aggregating.get(), at);
                }
                case 14 -> {
                    h.reducing.clear();
                    l.reducing.clear();
                }
                default -> {
                    h.map.clear();
                    l.map.clear();
                }
            }
        }
        // Everything expires: the files must empty without the task doing anything.
        clock.now += TTL_MS + 1_000;
        LetheKeyedStateBackend<Integer> b = (LetheKeyedStateBackend<Integer>) lethe;
        FileEntries.awaitEntries(b.db(), 0, 20_000);
        for (int key = 0; key < keys; key++) {
            lethe.setCurrentKey(key);
            assertEquals(null, l.value.value());
            assertEquals(List.of(), list(l.list.get()));
        }
    }

    /**
     * The physical promise: expired entries leave every file within D_th of their expiration with
     * no write from the task (the horizon moves on its own timer), and without per-key tombstones.
     */
    @Test
    void expiredEntriesLeaveTheFilesWithinTheThresholdWithoutTombstones() throws Exception {
        LetheKeyedStateBackend<Integer> lethe = (LetheKeyedStateBackend<Integer>) backend(lethe(), List.of());
        States s = new States(lethe, ttl(StateTtlConfig.UpdateType.OnCreateAndWrite));
        int n = 3_000;
        for (int k = 0; k < n; k++) {
            lethe.setCurrentKey(k);
            if (k == n / 2) {
                clock.now += TTL_MS / 2;  // the second half expires later
            }
            s.value.update(k);
            s.list.add(k);
            s.map.put(k, k);
            s.reducing.add(k);
        }
        lethe.db().flush();
        long entries = FileEntries.entries(lethe.db().statistics());
        assertTrue(entries >= 4L * n, "the entries are not in files: " + entries);

        // The first half has expired, list appends too (their delete keys are rounded up to a
        // grain of at most D_th / 20).
        clock.now += TTL_MS - TTL_MS / 2 + THRESHOLD.toMillis() / 20;
        long gone = FileEntries.awaitEntries(lethe.db(), 4L * (n - n / 2), THRESHOLD.toMillis() + 3_000);
        Statistics st = lethe.db().statistics();
        System.out.printf("first half (%d entries) gone from the files %d ms after expiring (D_th %d ms);"
                        + " pages dropped %d, rewritten %d%n", 4 * (n / 2), gone,
                THRESHOLD.toMillis(), st.get(Ticker.PAGES_DROPPED), st.get(Ticker.PAGES_REWRITTEN));
        assertTrue(gone <= THRESHOLD.toMillis() + 1_000, "expired entries outlived D_th: " + gone + " ms");
        assertEquals(0, FileEntries.tombstones(st), "expiry wrote tombstones");
        assertTrue(st.get(Ticker.PAGES_DROPPED) > 0, "no page was dropped whole");
        for (int k = n / 2; k < n; k++) {
            lethe.setCurrentKey(k);
            assertEquals(k, s.value.value());
            assertEquals(List.of(k), list(s.list.get()));
            assertEquals(k, s.map.get(k));
        }
        // The second half expires too: the files empty within D_th, still without a tombstone.
        clock.now += TTL_MS;
        long secondGone = FileEntries.awaitEntries(lethe.db(), 0, THRESHOLD.toMillis() + 3_000);
        assertTrue(secondGone <= THRESHOLD.toMillis() + 1_000, "expired entries outlived D_th: " + secondGone + " ms");
        assertEquals(0, FileEntries.tombstones(lethe.db().statistics()));
    }

    /** A state with TTL but cleanup in background disabled keeps its expired data on disk. */
    @Test
    void noHorizonWithoutBackgroundCleanup() throws Exception {
        LetheKeyedStateBackend<Integer> lethe = (LetheKeyedStateBackend<Integer>) backend(lethe(), List.of());
        ValueStateDescriptor<Integer> d = new ValueStateDescriptor<>("kept", Integer.class);
        d.enableTimeToLive(StateTtlConfig.newBuilder(Duration.ofMillis(TTL_MS)).disableCleanupInBackground().build());
        ValueState<Integer> state = lethe.getPartitionedState(VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, d);
        for (int k = 0; k < 500; k++) {
            lethe.setCurrentKey(k);
            state.update(k);
        }
        lethe.db().flush();
        clock.now += 10 * TTL_MS;
        assertEquals(0, lethe.expiryDriver().advance());
        Thread.sleep(3 * ADVANCE_PERIOD_MS);
        assertEquals(500, FileEntries.entries(lethe.db().statistics()));
        lethe.setCurrentKey(7);
        assertEquals(null, state.value());  // Flink still hides it
    }

    /**
     * Delete keys stay monotone across a restore onto a clock that stepped back: the restored
     * floor raises them (otherwise the engine's contract check fails the compaction).
     */
    @Test
    void restoreOntoAnEarlierClockKeepsDeleteKeysMonotone() throws Exception {
        AbstractKeyedStateBackend<Integer> first = backend(lethe(), List.of());
        States s = new States(first, ttl(StateTtlConfig.UpdateType.OnCreateAndWrite));
        for (int k = 0; k < 1_000; k++) {
            first.setCurrentKey(k);
            s.value.update(k);
            s.list.add(k);
        }
        KeyedStateHandle handle = checkpoint(first, 1);
        clock.now -= 10 * TTL_MS;
        LetheKeyedStateBackend<Integer> second = (LetheKeyedStateBackend<Integer>) backend(lethe(), List.of(handle));
        States r = new States(second, ttl(StateTtlConfig.UpdateType.OnCreateAndWrite));
        for (int k = 0; k < 1_000; k++) {
            second.setCurrentKey(k);
            r.value.update(-k);
            r.list.add(-k);
        }
        second.db().flush();
        second.db().compactAll();  // throws if a newer version has a smaller delete key
        second.setCurrentKey(5);
        assertEquals(-5, r.value.value());
        assertEquals(List.of(5, -5), list(r.list.get()));
    }

    /**
     * A state with a TTL gets a column family of the TTL states' tile size, any other state one of
     * the backend's; a restore from a native checkpoint or a canonical savepoint keeps both.
     */
    @ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(booleans = {false, true})
    void statesWithTtlGetTheirOwnTileSize(boolean canonicalSavepoint) throws Exception {
        LetheStateBackend tiles = lethe().with(LetheOptions.PAGES_PER_TILE, "2")
                .with(LetheOptions.TTL_PAGES_PER_TILE, "16");
        AbstractKeyedStateBackend<Integer> first = backend(tiles, List.of());
        writeTimedAndPlain(first);
        assertTileSizes((LetheKeyedStateBackend<Integer>) first, "16", "2");
        KeyedStateHandle handle = checkpoint(first, 1, canonicalSavepoint);
        LetheKeyedStateBackend<Integer> second = (LetheKeyedStateBackend<Integer>) backend(tiles, List.of(handle));
        writeTimedAndPlain(second);
        assertTileSizes(second, "16", "2");
    }

    private static void writeTimedAndPlain(AbstractKeyedStateBackend<Integer> b) throws Exception {
        ValueStateDescriptor<Integer> timed = new ValueStateDescriptor<>("timed", Integer.class);
        timed.enableTimeToLive(ttl(StateTtlConfig.UpdateType.OnCreateAndWrite));
        ValueStateDescriptor<Integer> plain = new ValueStateDescriptor<>("plain", Integer.class);
        b.setCurrentKey(1);
        b.getPartitionedState(VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, timed).update(1);
        b.getPartitionedState(VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, plain).update(1);
    }

    private static void assertTileSizes(LetheKeyedStateBackend<Integer> b, String timed, String plain) {
        assertEquals(timed, b.db().property(b.db().columnFamily("timed"), "lethe.pages-per-tile"));
        assertEquals(plain, b.db().property(b.db().columnFamily("plain"), "lethe.pages-per-tile"));
    }

    private static final long ADVANCE_PERIOD_MS = THRESHOLD.toMillis() / 20;

    private KeyedStateHandle checkpoint(AbstractKeyedStateBackend<Integer> b, long id) throws Exception {
        return snapshots.take(b, id);
    }

    private KeyedStateHandle checkpoint(AbstractKeyedStateBackend<Integer> b, long id, boolean canonicalSavepoint)
            throws Exception {
        return canonicalSavepoint ? snapshots.take(b, id, TestCheckpoints.CANONICAL_SAVEPOINT) : snapshots.take(b, id);
    }

    /** Waits until the files hold {@code expected} entries; returns the milliseconds it took. */
    private static List<Integer> list(Iterable<Integer> it) {
        List<Integer> r = new ArrayList<>();
        if (it != null) {
            it.forEach(r::add);
        }
        return r;
    }

    private static Map<Integer, Integer> map(Iterable<Map.Entry<Integer, Integer>> it) {
        Map<Integer, Integer> r = new HashMap<>();
        if (it != null) {
            it.forEach(e -> r.put(e.getKey(), e.getValue()));
        }
        return r;
    }
}
