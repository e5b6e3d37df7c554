package io.lethe.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lethe.engine.internal.Native;
import io.lethe.engine.internal.NativeLibrary;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.operators.testutils.MockEnvironment;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedStateBackendParametersImpl;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.runtime.state.memory.MemCheckpointStreamFactory;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;
import org.junit.jupiter.api.Test;

import java.io.File;
import java.util.Collections;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RunnableFuture;

/**
 * Resources of the keyed backend. A task that fails mid-checkpoint disposes its backend while the asynchronous part of a snapshot
 * has not run: the snapshot must then fail with an exception, nothing may crash, and every native
 * object and the working directory must be gone. A local directory that cannot be used fails the
 * backend with a message naming the option to fix.
 */
class LetheBackendResourcesTest {

    @Test
    void disposeBeforeTheAsynchronousPartFailsItCleanly() throws Exception {
        NativeLibrary.ensureLoaded();
        long nativeBefore = Native.liveObjects();
        MockEnvironment env = MockEnvironment.builder().build();
        AbstractKeyedStateBackend<Integer> backend = new LetheStateBackend()
                .with(LetheOptions.USE_MANAGED_MEMORY, false)
                .createKeyedStateBackend(new KeyedStateBackendParametersImpl<>(env, new JobID(), "dispose-test",
                        IntSerializer.INSTANCE, 128, KeyGroupRange.of(0, 127), env.getTaskKvStateRegistry(),
                        TtlTimeProvider.DEFAULT, new UnregisteredMetricsGroup(), Collections.emptyList(),
                        new CloseableRegistry()));
        ValueState<String> state = backend.getPartitionedState(VoidNamespace.INSTANCE,
                VoidNamespaceSerializer.INSTANCE, new ValueStateDescriptor<>("v", String.class));
        for (int i = 0; i < 2000; i++) {
            backend.setCurrentKey(i);
            state.update("value-" + i);
        }
        File[] dirsBefore = env.getIOManager().getSpillingDirectories()[0].listFiles(f -> f.getName().startsWith("job_"));
        assertTrue(dirsBefore != null && dirsBefore.length > 0, "no working directory was created");

        // Synchronous part now; the asynchronous part runs only after the backend is gone.
        RunnableFuture<SnapshotResult<KeyedStateHandle>> snapshot = backend.snapshot(1L, 1L,
                new MemCheckpointStreamFactory(16 << 20), CheckpointOptions.forCheckpointWithDefaultLocation());
        backend.dispose();
        snapshot.run();
        // Disposal cancels snapshots in flight (the backend's registry); a snapshot that got to
        // run anyway fails on the closed engine. Either way: an exception, not a result.
        Exception failure = assertThrows(Exception.class, snapshot::get);
        assertTrue(failure instanceof CancellationException || failure instanceof ExecutionException,
                "unexpected failure: " + failure);

        assertEquals(nativeBefore, Native.liveObjects(), "native objects were left behind");
        File[] dirsAfter = env.getIOManager().getSpillingDirectories()[0].listFiles(f -> f.getName().startsWith("job_"));
        assertFalse(dirsAfter != null && dirsAfter.length > 0, "the working directory was not deleted");
        env.close();
    }

    @Test
    void unusableLocalDirectoryFailsWithWhatToFix(@org.junit.jupiter.api.io.TempDir java.nio.file.Path tmp)
            throws Exception {
        File notADirectory = java.nio.file.Files.writeString(tmp.resolve("file"), "x").toFile();
        MockEnvironment env = MockEnvironment.builder().build();
        LetheStateBackend backend = new LetheStateBackend()
                .with(LetheOptions.USE_MANAGED_MEMORY, false)
                .with(LetheOptions.LOCAL_DIRECTORIES, java.util.List.of(new File(notADirectory, "sub").getPath()));
        LetheConfigurationException e = assertThrows(LetheConfigurationException.class,
                () -> backend.createKeyedStateBackend(new KeyedStateBackendParametersImpl<>(env, new JobID(), "op",
                        IntSerializer.INSTANCE, 128, KeyGroupRange.of(0, 127), env.getTaskKvStateRegistry(),
                        TtlTimeProvider.DEFAULT, new UnregisteredMetricsGroup(), Collections.emptyList(),
                        new CloseableRegistry())));
        assertTrue(e.getMessage().contains("does not exist and cannot be created (" + notADirectory + " is a file)")
                && e.getMessage().contains(LetheOptions.LOCAL_DIRECTORIES.key()), e.getMessage());

        // A directory that exists but takes no new directories (root may write anywhere else).
        File readOnly = new File("/proc/lethe-cannot-write");
        LetheStateBackend onProc = backend.with(LetheOptions.LOCAL_DIRECTORIES, java.util.List.of("/proc"));
        e = assertThrows(LetheConfigurationException.class,
                () -> onProc.createKeyedStateBackend(new KeyedStateBackendParametersImpl<>(env, new JobID(), "op",
                        IntSerializer.INSTANCE, 128, KeyGroupRange.of(0, 127), env.getTaskKvStateRegistry(),
                        TtlTimeProvider.DEFAULT, new UnregisteredMetricsGroup(), Collections.emptyList(),
                        new CloseableRegistry())));
        assertTrue(e.getMessage().startsWith("Cannot create a directory in the Lethe local directory /proc (")
                && e.getMessage().endsWith("set state.backend.lethe.localdir to writable local directories.")
                && !readOnly.exists(), e.getMessage());
        env.close();
    }
}
