package io.lethe.flink.snapshot;

import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.runtime.checkpoint.filemerging.FileMergingSnapshotManager;
import org.apache.flink.runtime.state.CheckpointStateOutputStream;
import org.apache.flink.runtime.state.CheckpointStreamFactory;
import org.apache.flink.runtime.state.CheckpointedStateScope;
import org.apache.flink.runtime.state.IncrementalKeyedStateHandle.HandleAndLocalPath;
import org.apache.flink.runtime.state.PlaceholderStreamStateHandle;
import org.apache.flink.runtime.state.StateUtil;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.util.IOUtils;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The file transfers of one native checkpoint: a table file the last completed checkpoint uploaded
 * becomes a {@link PlaceholderStreamStateHandle} (recorded in {@link #reused()}), every other file
 * an upload that computes the checksum of the bytes it sends ({@link FileChecksum}). Table files go
 * with the checkpoint's table scope, the other files (manifest, CURRENT) with exclusive scope.
 *
 * <p>An upload registers its stream with the snapshot's registry while it runs (so that a cancelled
 * checkpoint stops it), and its handle with {@code uploaded}, which the caller closes to discard
 * everything uploaded unless the snapshot completes.
 *
 * <p>Thread-safe: {@link #tasks} and {@link #upload} may run on several threads at once, and the
 * tasks run concurrently.
 */
final class CheckpointUploads {
    private final Map<String, CheckpointFile> confirmed;
    private final CheckpointedStateScope tableScope;
    private final CheckpointStreamFactory streamFactory;
    private final CloseableRegistry snapshotRegistry;
    private final CloseableRegistry uploaded;
    private final List<StreamStateHandle> reused = Collections.synchronizedList(new ArrayList<>());

    /**
     * @param confirmed the table files the last completed checkpoint uploaded, by name; empty when
     *     nothing may be reused
     * @param uploaded collects a handle for every upload, to discard them unless the snapshot completes
     */
    CheckpointUploads(Map<String, CheckpointFile> confirmed, CheckpointedStateScope tableScope,
            CheckpointStreamFactory streamFactory, CloseableRegistry snapshotRegistry, CloseableRegistry uploaded) {
        this.confirmed = confirmed;
        this.tableScope = tableScope;
        this.streamFactory = streamFactory;
        this.snapshotRegistry = snapshotRegistry;
        this.uploaded = uploaded;
    }

    /** The directory's files by name; only its table files with {@code tablesOnly}. */
    static List<Path> list(File directory, boolean tablesOnly) throws IOException {
        try (Stream<Path> list = Files.list(directory.toPath())) {
            return list.filter(p -> !tablesOnly || isTable(p.getFileName().toString()))
                    .sorted()
                    .collect(Collectors.toCollection(ArrayList::new));
        }
    }

    static boolean isTable(String fileName) {
        return fileName.endsWith(LetheNativeSnapshotStrategy.TABLE_FILE_SUFFIX);
    }

    /** One task per file, with its results in the files' order. */
    List<Callable<CheckpointFile>> tasks(List<Path> files) {
        List<Callable<CheckpointFile>> work = new ArrayList<>();
        for (Path file : files) {
            String name = file.getFileName().toString();
            boolean table = isTable(name);
            CheckpointFile placeholder = table ? placeholder(confirmed.get(name), name) : null;
            if (placeholder != null) {
                reused.add(placeholder.file().getHandle());
                work.add(() -> placeholder);
            } else {
                CheckpointedStateScope scope = table ? tableScope : CheckpointedStateScope.EXCLUSIVE;
                work.add(() -> upload(file, scope));
            }
        }
        return work;
    }

    /** Runs the tasks of {@code files} on the calling thread; their results in the files' order. */
    List<CheckpointFile> upload(List<Path> files) throws Exception {
        List<CheckpointFile> done = new ArrayList<>(files.size());
        for (Callable<CheckpointFile> task : tasks(files)) {
            done.add(task.call());
        }
        return done;
    }

    /** The handles the placeholders of {@link #tasks} refer to. */
    List<StreamStateHandle> reused() {
        return reused;
    }

    /**
     * A placeholder for a table file the last completed checkpoint uploaded, carrying the checksum of
     * the bytes uploaded then; null when there is none or the storage cannot reuse it.
     */
    private CheckpointFile placeholder(CheckpointFile previous, String name) {
        if (previous == null) {
            return null;
        }
        StreamStateHandle handle = previous.file().getHandle();
        StreamStateHandle placeholder = new PlaceholderStreamStateHandle(handle.getStreamStateHandleID(),
                handle.getStateSize(), FileMergingSnapshotManager.isFileMergingHandle(handle));
        return streamFactory.couldReuseStateHandle(placeholder)
                ? new CheckpointFile(HandleAndLocalPath.of(placeholder, name), previous.checksum())
                : null;
    }

    /** Uploads a file, computing the checksum of the bytes uploaded on the way. */
    private CheckpointFile upload(Path file, CheckpointedStateScope scope) throws IOException {
        CheckpointStateOutputStream out = streamFactory.createCheckpointStateOutputStream(scope);
        snapshotRegistry.registerCloseable(out);
        try (InputStream in = Files.newInputStream(file)) {
            FileChecksum checksum = FileChecksum.copy(in, out);
            if (!snapshotRegistry.unregisterCloseable(out)) {
                throw new IOException("The checkpoint was cancelled while " + file.getFileName() + " was uploaded");
            }
            StreamStateHandle handle = out.closeAndGetHandle();
            out = null;
            if (handle == null) {
                throw new IOException("The checkpoint storage returned no handle for " + file.getFileName());
            }
            uploaded.registerCloseable(() -> StateUtil.discardStateObjectQuietly(handle));
            return new CheckpointFile(HandleAndLocalPath.of(handle, file.getFileName().toString()), checksum);
        } finally {
            if (out != null && snapshotRegistry.unregisterCloseable(out)) {
                IOUtils.closeQuietly(out);
            }
        }
    }
}
