package io.lethe.flink.snapshot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lethe.flink.LetheOptions;
import io.lethe.flink.LetheStateBackend;
import io.lethe.flink.testing.TestCheckpoints;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.checkpoint.SavepointType;
import org.apache.flink.runtime.jobgraph.JobVertexID;
import org.apache.flink.runtime.operators.testutils.MockEnvironment;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.CheckpointStorageLocationReference;
import org.apache.flink.runtime.state.IncrementalLocalKeyedStateHandle;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedStateBackendParametersImpl;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.LocalRecoveryConfig;
import org.apache.flink.runtime.state.LocalSnapshotDirectoryProviderImpl;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.TestTaskStateManager;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;
import org.apache.flink.util.FileUtils;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.File;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.RunnableFuture;
import java.util.stream.Stream;

/**
 * Local recovery: a checkpoint keeps the engine's copy on the TaskManager as its local state, a
 * restore from that copy needs nothing from the checkpoint storage, and a damaged or missing copy
 * fails the restore naming it (Flink then restores from the storage, which still works).
 */
class LetheLocalRecoveryTest {
    private static final int MAX_PARALLELISM = 128;
    private static final int KEYS = 3_000;
    private static final KeyGroupRange ALL = KeyGroupRange.of(0, MAX_PARALLELISM - 1);
    private static final ValueStateDescriptor<String> VALUES = new ValueStateDescriptor<>("values", String.class);

    @TempDir Path dir;
    private MockEnvironment env;
    private TestCheckpoints storage;
    private final List<AbstractKeyedStateBackend<Integer>> backends = new ArrayList<>();

    @BeforeEach
    void setUp() throws IOException {
        LocalRecoveryConfig local = LocalRecoveryConfig.backupAndRecoveryEnabled(new LocalSnapshotDirectoryProviderImpl(
                dir.resolve("local").toFile(), new JobID(), new JobVertexID(), 0));
        env = MockEnvironment.builder()
                .setTaskStateManager(TestTaskStateManager.builder().setLocalRecoveryConfig(local).build())
                .build();
        storage = new TestCheckpoints(dir.resolve("storage"));
    }

    @AfterEach
    void tearDown() throws Exception {
        backends.forEach(AbstractKeyedStateBackend::dispose);
        env.close();
    }

    private AbstractKeyedStateBackend<Integer> backend(Collection<KeyedStateHandle> handles) throws IOException {
        AbstractKeyedStateBackend<Integer> b = new LetheStateBackend()
                .with(LetheOptions.USE_MANAGED_MEMORY, false)
                .createKeyedStateBackend(new KeyedStateBackendParametersImpl<>(env, new JobID(), "local-recovery-test",
                        IntSerializer.INSTANCE, MAX_PARALLELISM, ALL, env.getTaskKvStateRegistry(),
                        TtlTimeProvider.DEFAULT, new UnregisteredMetricsGroup(), handles, new CloseableRegistry()));
        backends.add(b);
        return b;
    }

    private AbstractKeyedStateBackend<Integer> backendWithValues() throws Exception {
        AbstractKeyedStateBackend<Integer> b = backend(List.of());
        ValueState<String> state = b.getPartitionedState(VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, VALUES);
        for (int k = 0; k < KEYS; k++) {
            b.setCurrentKey(k);
            state.update("value-" + k);
        }
        return b;
    }

    private static void assertValues(AbstractKeyedStateBackend<Integer> b) throws Exception {
        ValueState<String> state = b.getPartitionedState(VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, VALUES);
        for (int k = 0; k < KEYS; k++) {
            b.setCurrentKey(k);
            assertEquals("value-" + k, state.value(), "key " + k);
        }
    }

    private SnapshotResult<KeyedStateHandle> snapshot(AbstractKeyedStateBackend<Integer> b, long id,
            CheckpointOptions options) throws Exception {
        RunnableFuture<SnapshotResult<KeyedStateHandle>> f = b.snapshot(id, id, storage.streams, options);
        f.run();
        return f.get();
    }

    private SnapshotResult<KeyedStateHandle> checkpoint(AbstractKeyedStateBackend<Integer> b, long id)
            throws Exception {
        return snapshot(b, id, CheckpointOptions.forCheckpointWithDefaultLocation());
    }

    @Test
    void aCheckpointsLocalCopyRestoresWithoutTheCheckpointStorage() throws Exception {
        SnapshotResult<KeyedStateHandle> result = checkpoint(backendWithValues(), 1);
        assertInstanceOf(IncrementalRemoteKeyedStateHandle.class, result.getJobManagerOwnedSnapshot());
        IncrementalLocalKeyedStateHandle local =
                assertInstanceOf(IncrementalLocalKeyedStateHandle.class, result.getTaskLocalSnapshot());
        assertTrue(tables(local.getDirectoryStateHandle().getDirectory()) > 0, "no table file in the local copy");

        FileUtils.deleteDirectory(dir.resolve("storage").toFile());
        assertValues(backend(List.of(local)));
        // The restored engine links the copy's tables, so the copy stays whole for another restore.
        assertValues(backend(List.of(local)));
    }

    @Test
    void aSavepointKeepsNoLocalCopy() throws Exception {
        CheckpointOptions nativeSavepoint = new CheckpointOptions(SavepointType.savepoint(SavepointFormatType.NATIVE),
                CheckpointStorageLocationReference.getDefault());
        SnapshotResult<KeyedStateHandle> result = snapshot(backendWithValues(), 1, nativeSavepoint);
        assertNull(result.getTaskLocalSnapshot());
        try (Stream<Path> left = Files.walk(dir.resolve("local"))) {
            assertEquals(List.of(), left.filter(p -> p.getFileName().toString().startsWith("lethe-")).toList());
        }
    }

    enum Damage { TRUNCATED_TABLE, MISSING_COPY }

    @ParameterizedTest
    @EnumSource(Damage.class)
    void aDamagedLocalCopyFailsTheRestoreNamingItAndTheStorageStillRestores(Damage damage) throws Exception {
        SnapshotResult<KeyedStateHandle> result = checkpoint(backendWithValues(), 7);
        IncrementalLocalKeyedStateHandle local = (IncrementalLocalKeyedStateHandle) result.getTaskLocalSnapshot();
        Path copy = local.getDirectoryStateHandle().getDirectory();
        if (damage == Damage.TRUNCATED_TABLE) {
            try (Stream<Path> files = Files.list(copy)) {
                File table = files.filter(p -> p.toString().endsWith(".sst")).findFirst().orElseThrow().toFile();
                try (RandomAccessFile f = new RandomAccessFile(table, "rw")) {
                    f.setLength(f.length() / 2);
                }
            }
        } else {
            FileUtils.deleteDirectory(copy.toFile());
        }

        IOException e = assertThrows(IOException.class, () -> backend(List.of(local)));
        String messages = messages(e);
        assertTrue(messages.contains("Local copy of checkpoint 7"), messages);
        assertTrue(messages.contains(damage == Damage.TRUNCATED_TABLE ? "truncated" : "missing"), messages);
        assertValues(backend(List.of(result.getJobManagerOwnedSnapshot())));
    }

    private static long tables(Path directory) throws IOException {
        try (Stream<Path> files = Files.list(directory)) {
            return files.filter(p -> p.toString().endsWith(".sst")).count();
        }
    }

    private static String messages(Throwable e) {
        StringBuilder all = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause()) {
            all.append(t.getMessage()).append(" / ");
        }
        return all.toString();
    }
}
