package io.lethe.flink.restore;

import io.lethe.flink.snapshot.FileChecksum;
import io.lethe.flink.snapshot.FileTransfer;
import io.lethe.flink.snapshot.LetheNativeSnapshotStrategy;

import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.runtime.state.IncrementalKeyedStateHandle;
import org.apache.flink.runtime.state.IncrementalKeyedStateHandle.HandleAndLocalPath;
import org.apache.flink.runtime.state.IncrementalLocalKeyedStateHandle;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.filemerging.SegmentFileStateHandle;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.apache.flink.runtime.state.memory.ByteStreamStateHandle;
import org.apache.flink.util.IOUtils;

import java.io.File;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.stream.Stream;

/**
 * Fetches the files of a native checkpoint into an engine directory, checking each one's length and
 * CRC32C against those the checkpoint's metadata records (none before format version 3):
 * <ul>
 *   <li>from the checkpoint storage ({@link IncrementalRemoteKeyedStateHandle}), downloaded several at
 *       a time ({@link FileTransfer});
 *   <li>from the copy that local recovery keeps on the TaskManager ({@link
 *       IncrementalLocalKeyedStateHandle}): table files are hard-linked where the file system allows
 *       (they are immutable) and copied otherwise, every other file is copied, and each is read once to
 *       check it. A missing or damaged local copy fails the restore, naming the file, and Flink then
 *       restores from the checkpoint storage.
 * </ul>
 */
final class CheckpointFileFetcher {
    private final CloseableRegistry cancelRegistry;
    private final FileTransfer transfer;

    CheckpointFileFetcher(CloseableRegistry cancelRegistry, FileTransfer transfer) {
        this.cancelRegistry = cancelRegistry;
        this.transfer = transfer;
    }

    /** One file of a checkpoint: its name in the engine directory, and how to bring it there. */
    private record Source(String name, Callable<FileChecksum> fetch) {}

    /** @return the checksums of the fetched files, by name */
    Map<String, FileChecksum> fetch(IncrementalKeyedStateHandle handle, Map<String, FileChecksum> recorded,
            File directory) throws Exception {
        Files.createDirectories(directory.toPath());
        List<Source> sources = handle instanceof IncrementalLocalKeyedStateHandle local
                ? localSources(local, recorded, directory)
                : remoteSources((IncrementalRemoteKeyedStateHandle) handle, recorded, directory);
        List<FileChecksum> found = transfer.run(sources.stream().map(Source::fetch).toList());
        Map<String, FileChecksum> fetched = new HashMap<>();
        for (int i = 0; i < sources.size(); i++) {
            fetched.put(sources.get(i).name(), found.get(i));
        }
        if (recorded != null && !fetched.keySet().containsAll(recorded.keySet())) {
            Set<String> absent = new TreeSet<>(recorded.keySet());
            absent.removeAll(fetched.keySet());
            String lister = handle instanceof IncrementalLocalKeyedStateHandle
                    ? "its local copy lacks"
                    : "its state handle does not list";
            throw new IOException(describe(handle) + ": its Lethe metadata records files that " + lister + ", "
                    + absent + ": the checkpoint is damaged");
        }
        return fetched;
    }

    private List<Source> remoteSources(IncrementalRemoteKeyedStateHandle handle, Map<String, FileChecksum> recorded,
            File directory) throws IOException {
        List<HandleAndLocalPath> files = new ArrayList<>(handle.getSharedState());
        files.addAll(handle.getPrivateState());
        List<Source> sources = new ArrayList<>();
        for (HandleAndLocalPath f : files) {
            String name = checkedName(handle, f.getLocalPath());
            String what = describe(handle) + " file " + name + " (" + location(f.getHandle()) + ")";
            FileChecksum expected = expected(recorded, name, what);
            sources.add(new Source(name, () -> download(f.getHandle(), new File(directory, name), expected, what)));
        }
        return sources;
    }

    private List<Source> localSources(IncrementalLocalKeyedStateHandle handle, Map<String, FileChecksum> recorded,
            File directory) throws IOException {
        Path copy = handle.getDirectoryStateHandle().getDirectory();
        List<Path> files;
        try (Stream<Path> list = Files.list(copy)) {
            files = list.sorted().toList();
        } catch (NoSuchFileException e) {
            throw new IOException(describe(handle) + ": its local copy " + copy + " is missing", e);
        }
        List<Source> sources = new ArrayList<>();
        for (Path file : files) {
            String name = checkedName(handle, file.getFileName().toString());
            String what = describe(handle) + " file " + name + " (local copy " + file + ")";
            FileChecksum expected = expected(recorded, name, what);
            sources.add(new Source(name, () -> linkOrCopy(file, new File(directory, name).toPath(), expected, what)));
        }
        return sources;
    }

    private static String checkedName(IncrementalKeyedStateHandle handle, String name) throws IOException {
        if (name.contains("/") || name.contains("\\") || name.startsWith(".")) {
            throw new IOException(describe(handle) + " names an invalid local file '" + name + "'");
        }
        return name;
    }

    private static FileChecksum expected(Map<String, FileChecksum> recorded, String name, String what)
            throws IOException {
        if (recorded == null) {
            return null;
        }
        FileChecksum expected = recorded.get(name);
        if (expected == null) {
            throw new IOException(what + ": not among the files its Lethe metadata records: the checkpoint is damaged");
        }
        return expected;
    }

    static String describe(IncrementalKeyedStateHandle handle) {
        return (handle instanceof IncrementalLocalKeyedStateHandle ? "Local copy of checkpoint " : "Checkpoint ")
                + handle.getCheckpointId();
    }

    /** Downloads one file, computing its checksum on the way and checking it against {@code expected}. */
    private FileChecksum download(StreamStateHandle handle, File target, FileChecksum expected, String what)
            throws IOException {
        FSDataInputStream in = open(handle, what);
        cancelRegistry.registerCloseable(in);
        FileChecksum found;
        try (OutputStream out = Files.newOutputStream(target.toPath())) {
            found = FileChecksum.copy(in, out);
        } finally {
            if (cancelRegistry.unregisterCloseable(in)) {
                IOUtils.closeQuietly(in);
            }
        }
        if (expected != null) {
            expected.check(found, what);
        }
        return found;
    }

    /** Hard-links a table file (copies it where links fail) or copies any other file, then checks it. */
    private static FileChecksum linkOrCopy(Path source, Path target, FileChecksum expected, String what)
            throws IOException {
        boolean linked = false;
        if (source.getFileName().toString().endsWith(LetheNativeSnapshotStrategy.TABLE_FILE_SUFFIX)) {
            try {
                Files.createLink(target, source);
                linked = true;
            } catch (IOException | UnsupportedOperationException e) {
                // Another file system, or no hard links: copied below.
            }
        }
        FileChecksum found;
        try (InputStream in = Files.newInputStream(source)) {
            found = linked ? FileChecksum.copy(in, OutputStream.nullOutputStream()) : copy(in, target);
        } catch (NoSuchFileException e) {
            throw new IOException(what + ": missing", e);
        }
        if (expected != null) {
            expected.check(found, what);
        }
        return found;
    }

    private static FileChecksum copy(InputStream in, Path target) throws IOException {
        try (OutputStream out = Files.newOutputStream(target)) {
            return FileChecksum.copy(in, out);
        }
    }

    /** Opens a handle's stream; a file that is not there is a damaged (or deleted) checkpoint. */
    static FSDataInputStream open(StreamStateHandle handle, String what) throws IOException {
        try {
            return handle.openInputStream();
        } catch (FileNotFoundException | NoSuchFileException e) {
            throw new IOException(what + ": missing: the checkpoint is damaged or was deleted", e);
        }
    }

    /** Where a handle's bytes are, for errors: a file's path where there is one. */
    static String location(StreamStateHandle handle) {
        if (handle instanceof FileStateHandle) {
            return ((FileStateHandle) handle).getFilePath().toString();
        }
        if (handle instanceof SegmentFileStateHandle) {
            SegmentFileStateHandle segment = (SegmentFileStateHandle) handle;
            return segment.getFilePath() + " from byte " + segment.getStartPos();
        }
        if (handle instanceof ByteStreamStateHandle) {
            return "inline in the checkpoint's _metadata";
        }
        return handle.getStreamStateHandleID().getKeyString();
    }
}
