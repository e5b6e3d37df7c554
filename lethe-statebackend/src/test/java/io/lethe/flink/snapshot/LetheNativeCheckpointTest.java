package io.lethe.flink.snapshot;

import io.lethe.engine.LetheDb;
import io.lethe.engine.Ticker;
import io.lethe.flink.LetheKeyedStateBackend;
import io.lethe.flink.LetheOptions;
import io.lethe.flink.LetheStateBackend;
import io.lethe.flink.testing.TestCheckpoints;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.checkpoint.CheckpointType;
import org.apache.flink.runtime.operators.testutils.MockEnvironment;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.CheckpointStorageLocationReference;
import org.apache.flink.runtime.state.IncrementalKeyedStateHandle.HandleAndLocalPath;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedBackendSerializationProxy;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.runtime.state.KeyGroupedInternalPriorityQueue;
import org.apache.flink.runtime.state.KeyedStateBackendParametersImpl;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.PlaceholderStreamStateHandle;
import org.apache.flink.runtime.state.SharedStateRegistryImpl;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.apache.flink.runtime.state.memory.ByteStreamStateHandle;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;
import org.apache.flink.streaming.api.operators.TimerHeapInternalTimer;
import org.apache.flink.streaming.api.operators.TimerSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.RandomAccessFile;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.RunnableFuture;
import java.util.stream.Collectors;

/**
 * Native checkpoints in detail: what an incremental checkpoint uploads and what it shares, that a
 * restored engine's files are shared again, that timers travel with the engine files, rescaling in
 * both directions, the error for another backend's native checkpoint, the errors for damaged
 * checkpoint files, and that checkpoints of format version 2 (no checksums) still restore.
 */
class LetheNativeCheckpointTest {
    private static final int MAX_PARALLELISM = 128;
    private static final ValueStateDescriptor<String> VALUES = new ValueStateDescriptor<>("values", String.class);
    private static final TimerSerializer<Integer, VoidNamespace> TIMER_SERIALIZER =
            new TimerSerializer<>(IntSerializer.INSTANCE, VoidNamespaceSerializer.INSTANCE);

    @TempDir java.nio.file.Path checkpoints;
    private MockEnvironment env;
    private TestCheckpoints snapshots;
    private final List<AbstractKeyedStateBackend<Integer>> backends = new ArrayList<>();
    private boolean copyMemtables = true;

    @BeforeEach
    void setUp() throws IOException {
        env = MockEnvironment.builder().build();
        snapshots = new TestCheckpoints(checkpoints);
    }

    @AfterEach
    void tearDown() throws Exception {
        backends.forEach(AbstractKeyedStateBackend::dispose);
        env.close();
    }

    private AbstractKeyedStateBackend<Integer> backend(boolean incremental, KeyGroupRange range,
            Collection<KeyedStateHandle> handles) throws IOException {
        return backend(incremental, range, handles, LetheOptions.TimerServiceFactory.LETHE);
    }

    private AbstractKeyedStateBackend<Integer> backend(boolean incremental, KeyGroupRange range,
            Collection<KeyedStateHandle> handles, LetheOptions.TimerServiceFactory timers) throws IOException {
        AbstractKeyedStateBackend<Integer> b = new LetheStateBackend()
                .with(LetheOptions.USE_MANAGED_MEMORY, false)
                .with(LetheOptions.TIMER_SERVICE_FACTORY, timers)
                .with(LetheOptions.CHECKPOINT_COPY_MEMTABLES, copyMemtables)
                .with(CheckpointingOptions.INCREMENTAL_CHECKPOINTS, incremental)
                .createKeyedStateBackend(new KeyedStateBackendParametersImpl<>(env, new JobID(), "native-test",
                        IntSerializer.INSTANCE, MAX_PARALLELISM, range, env.getTaskKvStateRegistry(),
                        TtlTimeProvider.DEFAULT, new UnregisteredMetricsGroup(), handles, new CloseableRegistry()));
        backends.add(b);
        return b;
    }

    private static void put(AbstractKeyedStateBackend<Integer> b, int from, int to) throws Exception {
        ValueState<String> state = b.getPartitionedState(VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, VALUES);
        for (int k = from; k < to; k++) {
            b.setCurrentKey(k);
            state.update("value-" + k);
        }
    }

    /**
     * Writes the engine's memtables to table files, which checkpoints share; what is still in memory
     * a checkpoint copies into a table of its own, which no other checkpoint shares.
     */
    private static LetheDb engine(AbstractKeyedStateBackend<Integer> b) {
        return ((LetheKeyedStateBackend<Integer>) b).db();
    }

    /** Runs a checkpoint's synchronous part; running the returned future runs its asynchronous one. */
    private RunnableFuture<SnapshotResult<KeyedStateHandle>> synchronousPart(AbstractKeyedStateBackend<Integer> b,
            long id) throws Exception {
        return b.snapshot(id, id, snapshots.streams, CheckpointOptions.forCheckpointWithDefaultLocation());
    }

    private static void toFiles(AbstractKeyedStateBackend<Integer> b) throws Exception {
        LetheDb db = engine(b);
        db.flush();
        db.waitForBackgroundWork();
    }

    private IncrementalRemoteKeyedStateHandle checkpoint(AbstractKeyedStateBackend<Integer> b, long id,
            CheckpointOptions options) throws Exception {
        return (IncrementalRemoteKeyedStateHandle) snapshots.take(b, id, options);
    }

    private IncrementalRemoteKeyedStateHandle checkpoint(AbstractKeyedStateBackend<Integer> b, long id)
            throws Exception {
        return checkpoint(b, id, CheckpointOptions.forCheckpointWithDefaultLocation());
    }

    private static Set<String> tables(List<HandleAndLocalPath> files) {
        return files.stream().map(HandleAndLocalPath::getLocalPath).filter(n -> n.endsWith(".sst"))
                .collect(Collectors.toSet());
    }

    private static long placeholders(IncrementalRemoteKeyedStateHandle h) {
        return h.getSharedState().stream().filter(f -> f.getHandle() instanceof PlaceholderStreamStateHandle).count();
    }

    private static void assertValues(AbstractKeyedStateBackend<Integer> b, int from, int to, KeyGroupRange range)
            throws Exception {
        ValueState<String> state = b.getPartitionedState(VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, VALUES);
        Set<Integer> expected = new HashSet<>();
        for (int k = from; k < to; k++) {
            if (range.contains(KeyGroupRangeAssignment.assignToKeyGroup(k, MAX_PARALLELISM))) {
                expected.add(k);
                b.setCurrentKey(k);
                assertEquals("value-" + k, state.value(), "key " + k);
            }
        }
        // Exactly the keys of the range: nothing of another key group survived a clip.
        Set<Integer> keys = b.getKeys(VALUES.getName(), VoidNamespace.INSTANCE).collect(Collectors.toSet());
        assertEquals(expected, keys);
    }

    private File[] localCheckpointDirectories() {
        List<File> found = new ArrayList<>();
        for (File root : env.getIOManager().getSpillingDirectories()) {
            File[] instances = root.listFiles(f -> f.getName().startsWith("job_"));
            for (File instance : instances == null ? new File[0] : instances) {
                File[] chk = instance.listFiles(f -> f.getName().startsWith("chk-"));
                found.addAll(List.of(chk == null ? new File[0] : chk));
            }
        }
        return found.toArray(new File[0]);
    }

    @Test
    void incrementalCheckpointUploadsOnlyTablesTheLastCompletedOneDidNot() throws Exception {
        KeyGroupRange all = KeyGroupRange.of(0, MAX_PARALLELISM - 1);
        AbstractKeyedStateBackend<Integer> b = backend(true, all, List.of());
        SharedStateRegistryImpl registry = new SharedStateRegistryImpl();
        put(b, 0, 5000);
        toFiles(b);
        IncrementalRemoteKeyedStateHandle first = checkpoint(b, 1);
        assertEquals(0, placeholders(first), "nothing to share with yet");
        assertFalse(tables(first.getSharedState()).isEmpty(), "tables must be shared state");
        assertTrue(tables(first.getPrivateState()).isEmpty(), "tables must not be private state");
        first.registerSharedStates(registry, 1);
        b.notifyCheckpointComplete(1);

        put(b, 5000, 5100);
        IncrementalRemoteKeyedStateHandle second = checkpoint(b, 2);
        Set<String> reused = second.getSharedState().stream()
                .filter(f -> f.getHandle() instanceof PlaceholderStreamStateHandle)
                .map(HandleAndLocalPath::getLocalPath).collect(Collectors.toSet());
        Set<String> uploaded = tables(second.getSharedState());
        uploaded.removeAll(reused);
        assertFalse(reused.isEmpty(), "the first checkpoint's tables must be referenced, not uploaded");
        assertTrue(tables(first.getSharedState()).containsAll(reused));
        assertFalse(uploaded.isEmpty(), "the new writes' table must be uploaded");
        assertTrue(second.getCheckpointedSize() < first.getCheckpointedSize(),
                "incremental size " + second.getCheckpointedSize() + " vs full " + first.getCheckpointedSize());
        assertEquals(0, localCheckpointDirectories().length, "local checkpoint directories must be released");
        second.registerSharedStates(registry, 2);
        b.notifyCheckpointComplete(2);

        // The restored engine is the checkpoint's files: its first checkpoint shares them all.
        AbstractKeyedStateBackend<Integer> restored = backend(true, all, List.of(second));
        assertValues(restored, 0, 5100, all);
        IncrementalRemoteKeyedStateHandle third = checkpoint(restored, 3);
        assertEquals(tables(third.getSharedState()).size(), placeholders(third),
                "no table changed since the restored checkpoint");
        assertEquals(second.getBackendIdentifier(), third.getBackendIdentifier());
    }

    @Test
    void theAsynchronousPartCopiesTheStateOfTheSynchronousOneWithoutAFlush() throws Exception {
        KeyGroupRange all = KeyGroupRange.of(0, MAX_PARALLELISM - 1);
        AbstractKeyedStateBackend<Integer> b = backend(true, all, List.of());
        put(b, 0, 1000);
        LetheDb db = engine(b);
        long flushes = db.statistics().get(Ticker.FLUSHES);
        RunnableFuture<SnapshotResult<KeyedStateHandle>> f = synchronousPart(b, 1);
        // The task writes on before the asynchronous part runs: none of it is in the checkpoint.
        ValueState<String> state = b.getPartitionedState(VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, VALUES);
        for (int k = 0; k < 2000; k++) {
            b.setCurrentKey(k);
            state.update("later-" + k);
        }
        f.run();
        KeyedStateHandle handle = f.get().getJobManagerOwnedSnapshot();
        assertEquals(flushes, db.statistics().get(Ticker.FLUSHES), "the memtables are copied, not flushed");
        assertTrue(db.statistics().get(Ticker.BYTES_WRITTEN_CHECKPOINT_IMAGE) > 0);
        assertValues(backend(true, all, List.of(handle)), 0, 1000, all);
    }

    @Test
    void withoutCopiesOfTheMemtablesTheSynchronousPartFlushes() throws Exception {
        copyMemtables = false;
        KeyGroupRange all = KeyGroupRange.of(0, MAX_PARALLELISM - 1);
        AbstractKeyedStateBackend<Integer> b = backend(true, all, List.of());
        put(b, 0, 1000);
        LetheDb db = engine(b);
        long flushes = db.statistics().get(Ticker.FLUSHES);
        RunnableFuture<SnapshotResult<KeyedStateHandle>> f = synchronousPart(b, 1);
        assertEquals(flushes + 1, db.statistics().get(Ticker.FLUSHES), "flushed in the synchronous part");
        put(b, 1000, 2000);
        f.run();
        assertEquals(0, db.statistics().get(Ticker.BYTES_WRITTEN_CHECKPOINT_IMAGE));
        assertValues(backend(true, all, List.of(f.get().getJobManagerOwnedSnapshot())), 0, 1000, all);
    }

    @Test
    void uncompletedCheckpointsAreNeverABaseAndFullCheckpointsShareNothing() throws Exception {
        KeyGroupRange all = KeyGroupRange.of(0, MAX_PARALLELISM - 1);
        AbstractKeyedStateBackend<Integer> b = backend(true, all, List.of());
        put(b, 0, 3000);
        toFiles(b);
        checkpoint(b, 1);  // never completes
        put(b, 3000, 3100);
        assertEquals(0, placeholders(checkpoint(b, 2)), "checkpoint 1 never completed");
        b.notifyCheckpointComplete(2);
        put(b, 3100, 3200);
        CheckpointOptions full = CheckpointOptions.alignedNoTimeout(CheckpointType.FULL_CHECKPOINT,
                CheckpointStorageLocationReference.getDefault());
        assertEquals(0, placeholders(checkpoint(b, 3, full)), "a full checkpoint uploads everything");
        // Checkpoint 2 is the base, but checkpoint 3 uploaded its tables again and may yet complete
        // and replace their registered handles: they are not shared (FLINK-25395).
        assertEquals(0, placeholders(checkpoint(b, 4)));
        b.notifyCheckpointComplete(4);
        assertTrue(placeholders(checkpoint(b, 5)) > 0, "checkpoint 4 completed and is the base");
    }

    @Test
    void withoutIncrementalCheckpointsEveryFileIsPrivate() throws Exception {
        KeyGroupRange all = KeyGroupRange.of(0, MAX_PARALLELISM - 1);
        AbstractKeyedStateBackend<Integer> b = backend(false, all, List.of());
        put(b, 0, 3000);
        checkpoint(b, 1);
        b.notifyCheckpointComplete(1);
        put(b, 3000, 3100);
        IncrementalRemoteKeyedStateHandle second = checkpoint(b, 2);
        assertTrue(second.getSharedState().isEmpty());
        assertFalse(tables(second.getPrivateState()).isEmpty());
        assertValues(backend(false, all, List.of(second)), 0, 3100, all);
    }

    @Test
    void timersAndValuesSurviveRescalingOutAndIn() throws Exception {
        KeyGroupRange left = KeyGroupRange.of(0, 63);
        KeyGroupRange right = KeyGroupRange.of(64, 127);
        List<KeyedStateHandle> handles = new ArrayList<>();
        for (KeyGroupRange range : List.of(left, right)) {
            AbstractKeyedStateBackend<Integer> b = backend(true, range, List.of());
            KeyGroupedInternalPriorityQueue<TimerHeapInternalTimer<Integer, VoidNamespace>> timers =
                    b.create("timers", TIMER_SERIALIZER);
            ValueState<String> state = b.getPartitionedState(VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE,
                    VALUES);
            for (int k = 0; k < 4000; k++) {
                if (range.contains(KeyGroupRangeAssignment.assignToKeyGroup(k, MAX_PARALLELISM))) {
                    b.setCurrentKey(k);
                    state.update("value-" + k);
                    timers.add(new TimerHeapInternalTimer<>(1000L + k, k, VoidNamespace.INSTANCE));
                }
            }
            handles.add(checkpoint(b, 1));
        }
        // Scale in: one subtask takes both halves. Scale out: a range inside one half, and one
        // spanning both.
        for (KeyGroupRange range : List.of(KeyGroupRange.of(0, 127), KeyGroupRange.of(10, 40),
                KeyGroupRange.of(50, 90))) {
            List<KeyedStateHandle> intersecting = handles.stream()
                    .filter(h -> h.getKeyGroupRange().getIntersection(range).getNumberOfKeyGroups() > 0).toList();
            AbstractKeyedStateBackend<Integer> b = backend(true, range, intersecting);
            assertValues(b, 0, 4000, range);
            KeyGroupedInternalPriorityQueue<TimerHeapInternalTimer<Integer, VoidNamespace>> timers =
                    b.create("timers", TIMER_SERIALIZER);
            Set<Integer> timerKeys = new HashSet<>();
            for (TimerHeapInternalTimer<Integer, VoidNamespace> t; (t = timers.poll()) != null; ) {
                assertEquals(1000L + t.getKey(), t.getTimestamp());
                timerKeys.add(t.getKey());
            }
            Set<Integer> keys = b.getKeys(VALUES.getName(), VoidNamespace.INSTANCE).collect(Collectors.toSet());
            assertEquals(keys, timerKeys, "timers of range " + range);
        }
    }

    private static TimerHeapInternalTimer<Integer, VoidNamespace> timer(long ts, int key) {
        return new TimerHeapInternalTimer<>(ts, key, VoidNamespace.INSTANCE);
    }

    /**
     * Two halves fire their timers to different points, each stopping in the middle of a timestamp,
     * and one registers timers for times already passed, which hold its horizon low; restored at
     * other ranges (the base's horizon above or below the other half's), every pending timer fires
     * once and no fired one again.
     */
    @Test
    void engineTimersFireOnceAcrossRescalingWithDifferentHorizons() throws Exception {
        KeyGroupRange left = KeyGroupRange.of(0, 63);
        KeyGroupRange right = KeyGroupRange.of(64, 127);
        Set<TimerHeapInternalTimer<Integer, VoidNamespace>> pending = new HashSet<>();
        List<KeyedStateHandle> handles = new ArrayList<>();
        for (KeyGroupRange range : List.of(left, right)) {
            AbstractKeyedStateBackend<Integer> b = backend(true, range, List.of());
            KeyGroupedInternalPriorityQueue<TimerHeapInternalTimer<Integer, VoidNamespace>> timers =
                    b.create("timers", TIMER_SERIALIZER);
            List<Integer> keys = new ArrayList<>();
            for (int k = 0; k < 3000; k++) {
                if (range.contains(KeyGroupRangeAssignment.assignToKeyGroup(k, MAX_PARALLELISM))) {
                    keys.add(k);
                    timers.add(timer(1000L + k % 50, k));
                    pending.add(timer(1000L + k % 50, k));
                }
            }
            long upTo = range == left ? 1020 : 1005;
            while (timers.peek().getTimestamp() <= upTo) {
                assertTrue(pending.remove(timers.poll()));
            }
            for (int i = 0; i < 7; i++) { // stopped in the middle of the next timestamp
                assertTrue(pending.remove(timers.poll()));
            }
            if (range == right) {
                // Timers for times already passed: they keep the right half's horizon low, below
                // the fired timers the left half's horizon removes.
                for (int i = 0; i < 5; i++) {
                    timers.add(timer(900 + i, keys.get(i)));
                    pending.add(timer(900 + i, keys.get(i)));
                }
            }
            handles.add(checkpoint(b, 1));
        }
        for (KeyGroupRange range : List.of(KeyGroupRange.of(0, 127), KeyGroupRange.of(10, 40),
                KeyGroupRange.of(50, 90))) {
            List<KeyedStateHandle> intersecting = handles.stream()
                    .filter(h -> h.getKeyGroupRange().getIntersection(range).getNumberOfKeyGroups() > 0).toList();
            AbstractKeyedStateBackend<Integer> b = backend(true, range, intersecting);
            KeyGroupedInternalPriorityQueue<TimerHeapInternalTimer<Integer, VoidNamespace>> timers =
                    b.create("timers", TIMER_SERIALIZER);
            List<TimerHeapInternalTimer<Integer, VoidNamespace>> fired = new ArrayList<>();
            long last = Long.MIN_VALUE;
            for (TimerHeapInternalTimer<Integer, VoidNamespace> t; (t = timers.poll()) != null; ) {
                assertTrue(t.getTimestamp() >= last, "timers fire in time order");
                last = t.getTimestamp();
                fired.add(t);
            }
            Set<TimerHeapInternalTimer<Integer, VoidNamespace>> expected = pending.stream()
                    .filter(t -> range.contains(KeyGroupRangeAssignment.assignToKeyGroup(t.getKey(), MAX_PARALLELISM)))
                    .collect(Collectors.toSet());
            assertEquals(expected.size(), fired.size(), "no timer twice, none lost, range " + range);
            assertEquals(expected, new HashSet<>(fired), "range " + range);
        }
    }

    @Test
    void timersMoveFromHeapCheckpointsIntoTheEngineAndNotBack() throws Exception {
        KeyGroupRange all = KeyGroupRange.of(0, MAX_PARALLELISM - 1);
        AbstractKeyedStateBackend<Integer> heap = backend(true, all, List.of(), LetheOptions.TimerServiceFactory.HEAP);
        KeyGroupedInternalPriorityQueue<TimerHeapInternalTimer<Integer, VoidNamespace>> timers =
                heap.create("timers", TIMER_SERIALIZER);
        for (int k = 0; k < 500; k++) {
            timers.add(timer(2000 - k, k));
        }
        IncrementalRemoteKeyedStateHandle onHeap = checkpoint(heap, 1);

        AbstractKeyedStateBackend<Integer> engine = backend(true, all, List.of(onHeap));
        timers = engine.create("timers", TIMER_SERIALIZER);
        assertEquals(1501, timers.poll().getTimestamp(), "the heap checkpoint's timers are in the engine queue");
        assertEquals(499, timers.size());
        IncrementalRemoteKeyedStateHandle inEngine = checkpoint(engine, 2);
        IOException e = assertThrows(IOException.class,
                () -> backend(true, all, List.of(inEngine), LetheOptions.TimerServiceFactory.HEAP));
        assertTrue(e.getMessage().contains("timer-service.factory") && e.getMessage().contains("savepoint"),
                e.getMessage());
    }

    @Test
    void anotherBackendsNativeCheckpointFailsWithWhatToDo() {
        // What RocksDB writes first: the serialization proxy's version, never Lethe's marker.
        ByteStreamStateHandle meta = new ByteStreamStateHandle("meta", new byte[] {0, 0, 0, 6, 1, 2, 3, 4});
        IncrementalRemoteKeyedStateHandle foreign = new IncrementalRemoteKeyedStateHandle(UUID.randomUUID(),
                KeyGroupRange.of(0, MAX_PARALLELISM - 1), 7, List.of(), List.of(), meta, 8);
        Exception e = assertThrows(Exception.class,
                () -> backend(true, KeyGroupRange.of(0, MAX_PARALLELISM - 1), List.of(foreign)));
        String message = String.valueOf(e.getMessage()) + " " + (e.getCause() == null ? "" : e.getCause().getMessage());
        assertTrue(message.contains("not a Lethe native checkpoint"), message);
        File[] left = env.getIOManager().getSpillingDirectories()[0].listFiles(f -> f.getName().startsWith("job_"));
        assertTrue(left == null || left.length == 0, "a failed restore must leave no directory behind");
    }

    /** A kind of damage to one file of a checkpoint, and the words its restore error must contain. */
    enum Damage {
        FLIPPED_TABLE_BYTES("checksum mismatch"),
        TRUNCATED_TABLE("truncated"),
        MISSING_TABLE("missing"),
        FLIPPED_MANIFEST_BYTES("checksum mismatch"),
        FLIPPED_METADATA_BYTES("checksum mismatch");

        final String problem;

        Damage(String problem) {
            this.problem = problem;
        }
    }

    private static File file(StreamStateHandle handle) {
        assertTrue(handle instanceof FileStateHandle, "not a file: " + handle);
        return new File(((FileStateHandle) handle).getFilePath().toUri());
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Damage.class)
    void damagedCheckpointFailsTheRestoreNamingTheFileAndTheProblem(Damage damage) throws Exception {
        KeyGroupRange all = KeyGroupRange.of(0, MAX_PARALLELISM - 1);
        AbstractKeyedStateBackend<Integer> b = backend(true, all, List.of());
        put(b, 0, 5000);
        IncrementalRemoteKeyedStateHandle handle = checkpoint(b, 1);
        HandleAndLocalPath table = handle.getSharedState().stream()
                .max(Comparator.comparingLong(f -> f.getHandle().getStateSize())).orElseThrow();
        HandleAndLocalPath manifest = handle.getPrivateState().stream()
                .filter(f -> f.getLocalPath().startsWith("MANIFEST")).findFirst().orElseThrow();
        File damaged;
        String engineName;
        switch (damage) {
            case FLIPPED_MANIFEST_BYTES:
                damaged = file(manifest.getHandle());
                engineName = manifest.getLocalPath();
                break;
            case FLIPPED_METADATA_BYTES:
                damaged = file(handle.getMetaDataStateHandle());
                engineName = "Lethe metadata";
                break;
            default:
                damaged = file(table.getHandle());
                engineName = table.getLocalPath();
        }
        try (RandomAccessFile f = new RandomAccessFile(damaged, "rw")) {
            long middle = f.length() / 2;
            switch (damage) {
                case TRUNCATED_TABLE:
                    f.setLength(middle);
                    break;
                case MISSING_TABLE:
                    break;
                default:
                    f.seek(middle);
                    int old = f.read();
                    f.seek(middle);
                    f.write(old ^ 0x01);  // one bit: the least damage there is
            }
        }
        if (damage == Damage.MISSING_TABLE) {
            assertTrue(damaged.delete());
        }

        int instances = instanceDirectories();
        IOException e = assertThrows(IOException.class, () -> backend(true, all, List.of(handle)));
        String message = e.getMessage();
        assertTrue(message.contains("Checkpoint 1"), message);
        assertTrue(message.contains(engineName), message);
        assertTrue(message.contains(damaged.getName()), message);
        assertTrue(message.contains(damage.problem), message);
        assertEquals(instances, instanceDirectories(), "a failed restore must leave no directory behind");
    }

    private int instanceDirectories() {
        File[] found = env.getIOManager().getSpillingDirectories()[0].listFiles(f -> f.getName().startsWith("job_"));
        return found == null ? 0 : found.length;
    }

    @Test
    void checkpointOfFormatVersion2RestoresUncheckedAndItsTablesAreCheckedOnceShared() throws Exception {
        KeyGroupRange all = KeyGroupRange.of(0, MAX_PARALLELISM - 1);
        AbstractKeyedStateBackend<Integer> b = backend(true, all, List.of());
        put(b, 0, 3000);
        IncrementalRemoteKeyedStateHandle written = checkpoint(b, 1);
        IncrementalRemoteKeyedStateHandle version2 = withFormatVersion2(written);

        AbstractKeyedStateBackend<Integer> restored = backend(true, all, List.of(version2));
        assertValues(restored, 0, 3000, all);
        // The restored tables are shared by the next checkpoint, which records their checksums as
        // downloaded: a restore from it checks them.
        SharedStateRegistryImpl registry = new SharedStateRegistryImpl();
        version2.registerSharedStates(registry, 1);
        put(restored, 3000, 3100);
        IncrementalRemoteKeyedStateHandle next = checkpoint(restored, 2);
        assertTrue(placeholders(next) > 0, "the restored tables must be shared");
        next.registerSharedStates(registry, 2);
        assertValues(backend(true, all, List.of(next)), 0, 3100, all);

        HandleAndLocalPath shared = next.getSharedState().stream()
                .filter(f -> tables(version2.getSharedState()).contains(f.getLocalPath())).findFirst().orElseThrow();
        try (RandomAccessFile f = new RandomAccessFile(file(shared.getHandle()), "rw")) {
            f.setLength(f.length() - 1);
        }
        IOException e = assertThrows(IOException.class, () -> backend(true, all, List.of(next)));
        assertTrue(e.getMessage().contains(shared.getLocalPath() + " (") && e.getMessage().contains("truncated"),
                e.getMessage());
    }

    /**
     * The same checkpoint as Lethe wrote it before file checksums: metadata of format version 2,
     * without the file checksums after the header, the (empty) list of engine timer queues after the
     * state meta infos, and the trailing CRC32C.
     */
    private static IncrementalRemoteKeyedStateHandle withFormatVersion2(IncrementalRemoteKeyedStateHandle h)
            throws IOException {
        byte[] v4;
        try (InputStream in = h.getMetaDataStateHandle().openInputStream()) {
            v4 = in.readAllBytes();
        }
        DataInputDeserializer in = new DataInputDeserializer(v4);
        int magic = in.readInt();
        assertEquals(4, in.readInt(), "the format version written");
        int files = in.readInt();
        for (int i = 0; i < files; i++) {
            in.readUTF();
            in.readLong();
            in.readInt();
        }
        int proxyStart = in.getPosition();
        new KeyedBackendSerializationProxy<Integer>(LetheNativeCheckpointTest.class.getClassLoader()).read(in);
        int proxyEnd = in.getPosition();
        assertEquals(0, in.readInt(), "no timer queue in the engine");
        DataOutputSerializer out = new DataOutputSerializer(v4.length);
        out.writeInt(magic);
        out.writeInt(2);
        out.write(v4, proxyStart, proxyEnd - proxyStart);
        out.write(v4, in.getPosition(), v4.length - in.getPosition() - 4);
        return new IncrementalRemoteKeyedStateHandle(h.getBackendIdentifier(), h.getKeyGroupRange(),
                h.getCheckpointId(), h.getSharedState(), h.getPrivateState(),
                new ByteStreamStateHandle("version-2-metadata", out.getCopyOfBuffer()), h.getCheckpointedSize());
    }
}
