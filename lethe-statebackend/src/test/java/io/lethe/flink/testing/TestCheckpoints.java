package io.lethe.flink.testing;

import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.core.fs.Path;
import org.apache.flink.core.fs.local.LocalFileSystem;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.checkpoint.SavepointType;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.CheckpointStorageLocationReference;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SavepointResources;
import org.apache.flink.runtime.state.SavepointSnapshotStrategy;
import org.apache.flink.runtime.state.SnapshotExecutionType;
import org.apache.flink.runtime.state.SnapshotStrategyRunner;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.filesystem.FsCheckpointStreamFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.util.concurrent.RunnableFuture;

/** Checkpoint streams in a local directory, and snapshots of a keyed backend run to completion. */
public final class TestCheckpoints {
    public static final CheckpointOptions CANONICAL_SAVEPOINT = new CheckpointOptions(
            SavepointType.savepoint(SavepointFormatType.CANONICAL), CheckpointStorageLocationReference.getDefault());

    public final FsCheckpointStreamFactory streams;

    public TestCheckpoints(java.nio.file.Path directory) throws IOException {
        Files.createDirectories(directory.resolve("exclusive"));
        Files.createDirectories(directory.resolve("shared"));
        streams = new FsCheckpointStreamFactory(LocalFileSystem.getSharedInstance(),
                new Path(directory.resolve("exclusive").toUri()), new Path(directory.resolve("shared").toUri()), 0,
                4096);
    }

    /** Takes a snapshot synchronously and returns the handle the JobManager would keep. */
    public KeyedStateHandle take(AbstractKeyedStateBackend<?> backend, long id, CheckpointOptions options) throws Exception {
        RunnableFuture<SnapshotResult<KeyedStateHandle>> f = backend.snapshot(id, id, streams, options);
        f.run();
        return f.get().getJobManagerOwnedSnapshot();
    }

    public KeyedStateHandle take(AbstractKeyedStateBackend<?> backend, long id) throws Exception {
        return take(backend, id, CheckpointOptions.forCheckpointWithDefaultLocation());
    }

    /** A canonical savepoint, taken as Flink's operators take it: through the backend's savepoint(). */
    public KeyedStateHandle takeCanonicalSavepoint(AbstractKeyedStateBackend<?> backend, long id) throws Exception {
        SavepointResources<?> resources = backend.savepoint();
        RunnableFuture<SnapshotResult<KeyedStateHandle>> f = new SnapshotStrategyRunner<>("canonical savepoint",
                new SavepointSnapshotStrategy<>(resources.getSnapshotResources()), new CloseableRegistry(),
                SnapshotExecutionType.SYNCHRONOUS).snapshot(id, id, streams, CANONICAL_SAVEPOINT);
        f.run();
        return f.get().getJobManagerOwnedSnapshot();
    }
}
