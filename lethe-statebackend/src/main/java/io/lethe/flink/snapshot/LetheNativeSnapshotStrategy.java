package io.lethe.flink.snapshot;

import io.lethe.engine.LetheDb;
import io.lethe.engine.PendingCheckpoint;
import io.lethe.flink.expiry.WindowExpiry;
import io.lethe.flink.timers.EngineTimerQueues;
import io.lethe.flink.timers.QueueRecord;
import io.lethe.flink.state.RegisteredState;

import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.checkpoint.SnapshotType;
import org.apache.flink.runtime.state.CheckpointStreamFactory;
import org.apache.flink.runtime.state.CheckpointStreamWithResultProvider;
import org.apache.flink.runtime.state.CheckpointedStateScope;
import org.apache.flink.runtime.state.IncrementalKeyedStateHandle.HandleAndLocalPath;
import org.apache.flink.runtime.state.DirectoryStateHandle;
import org.apache.flink.runtime.state.IncrementalLocalKeyedStateHandle;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedBackendSerializationProxy;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.LocalRecoveryConfig;
import org.apache.flink.runtime.state.PlaceholderStreamStateHandle;
import org.apache.flink.runtime.state.SnapshotResources;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.SnapshotStrategy;
import org.apache.flink.runtime.state.StateSnapshot.StateKeyGroupWriter;
import org.apache.flink.runtime.state.StateUtil;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueSnapshotRestoreWrapper;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueStateSnapshot;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot;
import org.apache.flink.util.FileUtils;
import org.apache.flink.util.IOUtils;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nonnull;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.function.Supplier;

/**
 * Native checkpoints of a Lethe engine, full or incremental, as Flink's {@link
 * IncrementalRemoteKeyedStateHandle} (the only handle type besides the canonical ones that Flink's
 * checkpoint metadata accepts).
 *
 * <p>Synchronous part: timer queues kept in the engine hand it their buffered writes and move
 * their horizons past their fired timers; the engine begins a copy of itself in {@code chk-<id>}
 * under the instance directory (its table files as hard links, which cost no copy, and its
 * memtables taken as they are, not flushed), and the state meta infos, heap timer queues and engine
 * queues' records are captured. Asynchronous part: the engine writes the memtables it took into
 * table files of the copy's own (while the task goes on writing), one image per state on the
 * transfer threads, each uploaded as soon as it is written, while the other threads upload the
 * linked table files; then the engine writes the copy's manifest, and it is uploaded too ({@link
 * CheckpointUploads}): table files ({@code *.sst}, immutable) as shared
 * state (several at a time, {@link FileTransfer}), every other file (manifest, CURRENT) as private
 * state; last a metadata stream in the format of {@link LetheNativeSnapshotFormat}. With {@code
 * copyMemtables} off the engine flushes its memtables in the synchronous part instead, and the copy
 * holds none.
 *
 * <p>Incremental: a table file already uploaded by the last <em>completed</em> checkpoint is not
 * uploaded again but referenced by a {@link PlaceholderStreamStateHandle}, which the JobManager's
 * shared-state registry resolves. Files uploaded by checkpoints that never completed are never
 * reused: they may have been discarded (FLINK-25395). Full checkpoints of an incremental job
 * (sharing strategy FORWARD) and native savepoints (NO_SHARING) upload everything, savepoints with
 * exclusive scope. Without incremental checkpoints every file is uploaded with exclusive scope as
 * private state, as the RocksDB backend's native full snapshots do.
 *
 * <p>Local recovery ({@code execution.state-recovery.from-local}): the engine writes its copy into
 * this subtask's checkpoint directory on the TaskManager instead, and after the upload that
 * directory and a local copy of the metadata stream stay as the checkpoint's {@link
 * IncrementalLocalKeyedStateHandle}, which Flink keeps until a later checkpoint is confirmed and
 * offers first when this subtask restores on the same TaskManager. Table files in it are hard links,
 * so it costs little space, but while it holds them page drops punch no holes into them.
 * Savepoints keep no local copy.
 *
 * <p>Every file's length and CRC32C are computed while it is uploaded (a placeholder carries those
 * of the upload it refers to) and recorded in the metadata stream, which is written last, so that
 * a restore can check each file ({@link FileChecksum}).
 *
 * <p>Thread-safety: {@link #syncPrepareResources} runs on the task thread; the returned supplier
 * on an asynchronous thread, possibly while the next checkpoint is prepared; completion
 * notifications come from the task thread. The uploaded-files map is guarded by itself.
 */
public final class LetheNativeSnapshotStrategy<K>
        implements SnapshotStrategy<KeyedStateHandle, LetheNativeSnapshotStrategy.NativeResources> {
    private static final Logger LOG = LoggerFactory.getLogger(LetheNativeSnapshotStrategy.class);

    /** Table files: immutable, so a file uploaded once can be shared by later checkpoints. */
    public static final String TABLE_FILE_SUFFIX = ".sst";

    /** The metadata of a few states and no timers fits; it grows for the timers. */
    private static final int METADATA_INITIAL_BYTES = 4096;

    private final LetheDb db;
    private final File instanceBasePath;
    private final TypeSerializer<K> keySerializer;
    private final Supplier<Collection<RegisteredState>> kvStates;
    private final Supplier<Collection<HeapPriorityQueueSnapshotRestoreWrapper<?>>> queues;
    private final KeyGroupRange keyGroupRange;
    private final UUID backendUid;
    private final boolean incremental;
    private final boolean copyMemtables;
    private final Supplier<WindowExpiry.Record> window;
    private final EngineTimerQueues engineTimers;
    private final FileTransfer transfer;
    private final LocalRecoveryConfig localRecovery;

    /** Table files uploaded per checkpoint id (placeholders included), newest checkpoints only. */
    private final SortedMap<Long, List<CheckpointFile>> uploadedTables;
    private long lastCompletedCheckpointId;

    /**
     * @param copyMemtables whether the engine's copy takes its memtables as they are (written in the
     *     asynchronous part) instead of flushing them in the synchronous one
     * @param restoredTables the table files of the checkpoint this backend was restored from, with
     *     the checksums of their bytes, by its id, when the restored engine is that checkpoint's
     *     files unchanged (no rescaling); empty otherwise
     * @param transfer uploads the files, on its threads; owned by the caller
     * @param localRecovery whether, and where, checkpoints are also kept on this TaskManager
     */
    public LetheNativeSnapshotStrategy(LetheDb db, File instanceBasePath, TypeSerializer<K> keySerializer,
            Supplier<Collection<RegisteredState>> kvStates, Supplier<Collection<HeapPriorityQueueSnapshotRestoreWrapper<?>>> queues,
            KeyGroupRange keyGroupRange, UUID backendUid, boolean incremental, boolean copyMemtables,
            SortedMap<Long, List<CheckpointFile>> restoredTables, long lastCompletedCheckpointId,
            Supplier<WindowExpiry.Record> window, EngineTimerQueues engineTimers, FileTransfer transfer,
            LocalRecoveryConfig localRecovery) {
        this.transfer = transfer;
        this.localRecovery = localRecovery;
        this.window = window;
        this.engineTimers = engineTimers;
        this.db = db;
        this.instanceBasePath = instanceBasePath;
        this.keySerializer = keySerializer;
        this.kvStates = kvStates;
        this.queues = queues;
        this.keyGroupRange = keyGroupRange;
        this.backendUid = backendUid;
        this.incremental = incremental;
        this.copyMemtables = copyMemtables;
        this.uploadedTables = new TreeMap<>(restoredTables);
        this.lastCompletedCheckpointId = lastCompletedCheckpointId;
    }

    public boolean isIncremental() {
        return incremental;
    }

    /** What one checkpoint reads in its asynchronous part; released when that part ends. */
    public static final class NativeResources implements SnapshotResources {
        final File directory;
        /** The engine's copy in {@code directory}, finished by the asynchronous part; null without one. */
        final PendingCheckpoint copy;
        final List<StateMetaInfoSnapshot> metaInfos;
        final List<HeapPriorityQueueStateSnapshot<?>> queueSnapshots;
        final Map<String, CheckpointFile> confirmedTables;
        final Map<String, Long> floors;
        final WindowExpiry.Record window;
        final Map<String, QueueRecord> engineQueues;
        /** The directory is in local recovery's place; kept once a checkpoint's local state holds it. */
        final boolean local;
        private volatile boolean kept;

        NativeResources(File directory, PendingCheckpoint copy, boolean local, List<StateMetaInfoSnapshot> metaInfos,
                List<HeapPriorityQueueStateSnapshot<?>> queueSnapshots, Map<String, CheckpointFile> confirmedTables,
                Map<String, Long> floors, WindowExpiry.Record window, Map<String, QueueRecord> engineQueues) {
            this.window = window;
            this.engineQueues = engineQueues;
            this.directory = directory;
            this.copy = copy;
            this.local = local;
            this.metaInfos = metaInfos;
            this.queueSnapshots = queueSnapshots;
            this.confirmedTables = confirmedTables;
            this.floors = floors;
        }

        @Override
        public void release() {
            queueSnapshots.forEach(HeapPriorityQueueStateSnapshot::release);
            if (copy != null) {
                copy.close();  // unfinished: the engine removes what it wrote
            }
            if (directory != null && !kept) {
                try {
                    FileUtils.deleteDirectory(directory);
                } catch (IOException e) {
                    LOG.warn("Could not delete the local checkpoint directory {}", directory, e);
                }
            }
        }
    }

    @Override
    public NativeResources syncPrepareResources(long checkpointId) throws Exception {
        List<StateMetaInfoSnapshot> metas = new ArrayList<>();
        Map<String, Long> floors = new LinkedHashMap<>();
        for (RegisteredState state : kvStates.get()) {
            metas.add(state.snapshotMetaInfo());
            // Taken with the engine checkpoint below: at least every delete key in it.
            floors.put(state.name(), state.expiry().floor());
        }
        List<HeapPriorityQueueStateSnapshot<?>> queueSnapshots = new ArrayList<>();
        for (HeapPriorityQueueSnapshotRestoreWrapper<?> q : queues.get()) {
            metas.add(q.getMetaInfo().snapshot());
            queueSnapshots.add(q.stateSnapshot());
        }
        Map<String, QueueRecord> engineQueues = Map.of();
        if (engineTimers != null) {
            // Fired timers leave the engine's view first, so that the snapshot holds none.
            engineTimers.prepareSnapshot();
            metas.addAll(engineTimers.metaInfoSnapshots());
            engineQueues = engineTimers.records();
        }
        if (metas.isEmpty()) {
            return new NativeResources(null, null, false, metas, queueSnapshots, Map.of(), floors, window.get(),
                    engineQueues);
        }
        Map<String, CheckpointFile> confirmed = confirmedTables();
        boolean local = localRecovery.isLocalBackupEnabled();
        File directory = checkpointDirectory(checkpointId, local);
        if (directory.exists()) {
            // Left by a checkpoint of the same id that failed before its cleanup: never reused.
            FileUtils.deleteDirectory(directory);
        }
        // Without local recovery the copy is a staging area, removed after the upload: not synced,
        // so what the engine writes into it (its memtables) may never reach the disk.
        PendingCheckpoint copy = db.beginCheckpoint(directory.getAbsolutePath(), local, !copyMemtables);
        return new NativeResources(directory, copy, local, metas, queueSnapshots, confirmed, floors, window.get(),
                engineQueues);
    }

    /**
     * Where the engine writes its copy: with local recovery in the checkpoint's directory of this
     * subtask on the TaskManager, where it stays as the checkpoint's local state (a savepoint's is
     * deleted after the upload); otherwise under the instance directory, deleted after the upload.
     */
    private File checkpointDirectory(long checkpointId, boolean local) throws IOException {
        if (!local) {
            return new File(instanceBasePath, "chk-" + checkpointId);
        }
        File subtask = localRecovery.getLocalStateDirectoryProvider()
                .orElseThrow(LocalRecoveryConfig.localRecoveryNotEnabled())
                .subtaskSpecificCheckpointDirectory(checkpointId);
        Files.createDirectories(subtask.toPath());
        // Several keyed operators of one task share the subtask's directory.
        return new File(subtask, "lethe-" + UUID.randomUUID());
    }

    /**
     * The table files the last completed checkpoint referenced, minus those that later (not yet
     * completed) checkpoints uploaded again: a re-upload may replace the registered handle.
     */
    private Map<String, CheckpointFile> confirmedTables() {
        synchronized (uploadedTables) {
            List<CheckpointFile> base = uploadedTables.get(lastCompletedCheckpointId);
            if (base == null) {
                return Map.of();
            }
            Map<String, CheckpointFile> confirmed = new HashMap<>();
            for (CheckpointFile f : base) {
                confirmed.put(f.file().getLocalPath(), f);
            }
            for (List<CheckpointFile> later : uploadedTables.tailMap(lastCompletedCheckpointId + 1).values()) {
                for (CheckpointFile f : later) {
                    if (!(f.file().getHandle() instanceof PlaceholderStreamStateHandle)) {
                        confirmed.remove(f.file().getLocalPath());
                    }
                }
            }
            return confirmed;
        }
    }

    @Override
    public SnapshotResultSupplier<KeyedStateHandle> asyncSnapshot(NativeResources resources, long checkpointId,
            long timestamp, @Nonnull CheckpointStreamFactory streamFactory,
            @Nonnull CheckpointOptions checkpointOptions) {
        if (resources.metaInfos.isEmpty()) {
            return registry -> SnapshotResult.empty();
        }
        SnapshotType.SharingFilesStrategy sharing = checkpointOptions.getCheckpointType().getSharingFilesStrategy();
        boolean reuse = incremental && sharing == SnapshotType.SharingFilesStrategy.FORWARD_BACKWARD;
        boolean remember = incremental && sharing != SnapshotType.SharingFilesStrategy.NO_SHARING;
        CheckpointedStateScope tableScope = incremental && sharing != SnapshotType.SharingFilesStrategy.NO_SHARING
                ? CheckpointedStateScope.SHARED
                : CheckpointedStateScope.EXCLUSIVE;
        boolean keepLocal = resources.local && !checkpointOptions.getCheckpointType().isSavepoint();
        return registry -> upload(resources, checkpointId, streamFactory, registry,
                reuse ? resources.confirmedTables : Map.of(), tableScope, remember, keepLocal);
    }

    private SnapshotResult<KeyedStateHandle> upload(NativeResources resources, long checkpointId,
            CheckpointStreamFactory streamFactory, CloseableRegistry snapshotRegistry,
            Map<String, CheckpointFile> confirmed, CheckpointedStateScope tableScope, boolean remember,
            boolean keepLocal) throws Exception {
        // Everything uploaded so far; discarded unless the snapshot completes.
        CloseableRegistry uploaded = new CloseableRegistry();
        boolean completed = false;
        try {
            CheckpointUploads files = new CheckpointUploads(confirmed, tableScope, streamFactory, snapshotRegistry,
                    uploaded);
            List<CheckpointFile> done = uploadCopy(resources, files);
            long persistedBytes = 0;
            List<CheckpointFile> tables = new ArrayList<>();
            List<HandleAndLocalPath> others = new ArrayList<>();
            Map<String, FileChecksum> checksums = new LinkedHashMap<>();
            for (CheckpointFile f : done) {
                String name = f.file().getLocalPath();
                checksums.put(name, f.checksum());
                if (!(f.file().getHandle() instanceof PlaceholderStreamStateHandle)) {
                    persistedBytes += f.file().getStateSize();
                }
                // A non-incremental checkpoint owns all its files, as RocksDB's native full one.
                if (CheckpointUploads.isTable(name) && incremental) {
                    tables.add(f);
                } else {
                    others.add(f.file());
                }
            }
            // Last: it records the checksums of the files above.
            SnapshotResult<StreamStateHandle> metas = writeMetadata(resources, checkpointId, checksums, streamFactory,
                    snapshotRegistry, uploaded, keepLocal);
            StreamStateHandle meta = metas.getJobManagerOwnedSnapshot();
            persistedBytes += meta.getStateSize();
            if (remember) {
                synchronized (uploadedTables) {
                    uploadedTables.put(checkpointId, Collections.unmodifiableList(tables));
                }
            }
            IncrementalRemoteKeyedStateHandle handle = new IncrementalRemoteKeyedStateHandle(backendUid,
                    keyGroupRange, checkpointId, tables.stream().map(CheckpointFile::file).toList(), others, meta,
                    persistedBytes);
            completed = true;
            streamFactory.reusePreviousStateHandle(files.reused());
            if (!keepLocal) {
                return SnapshotResult.of(handle);
            }
            resources.kept = true;
            return SnapshotResult.withLocalState(handle, new IncrementalLocalKeyedStateHandle(backendUid,
                    checkpointId, DirectoryStateHandle.forPathWithSize(resources.directory.toPath()), keyGroupRange,
                    metas.getTaskLocalSnapshot(), handle.getSharedState()));
        } finally {
            if (!completed) {
                IOUtils.closeQuietly(uploaded);
            }
        }
    }

    /**
     * Uploads the copy's files: each image of the memtables as soon as the engine wrote it, several
     * images written at once on the transfer threads, while the others upload the linked tables,
     * which are all there; then, once the engine wrote the manifest, the files left.
     */
    private List<CheckpointFile> uploadCopy(NativeResources resources, CheckpointUploads files) throws Exception {
        List<Path> linked = CheckpointUploads.list(resources.directory, true);
        Path directory = resources.directory.toPath();
        List<Callable<List<CheckpointFile>>> work = new ArrayList<>();
        for (int i = 0; i < resources.copy.imageCount(); i++) {
            int image = i;  // images first: each is likely the longest task
            work.add(() -> files.upload(resources.copy.writeImage(image).stream().map(directory::resolve).toList()));
        }
        for (Callable<CheckpointFile> task : files.tasks(linked)) {
            work.add(() -> List.of(task.call()));
        }
        List<CheckpointFile> done = new ArrayList<>();
        transfer.run(work).forEach(done::addAll);
        resources.copy.finish();
        Set<String> uploaded = new HashSet<>();
        done.forEach(f -> uploaded.add(f.file().getLocalPath()));
        List<Path> rest = CheckpointUploads.list(resources.directory, false);
        rest.removeIf(p -> uploaded.contains(p.getFileName().toString()));
        done.addAll(transfer.run(files.tasks(rest)));
        return done;
    }

    /** The metadata stream, also written to local recovery's directory with {@code keepLocal}. */
    private SnapshotResult<StreamStateHandle> writeMetadata(NativeResources resources, long checkpointId,
            Map<String, FileChecksum> files, CheckpointStreamFactory streamFactory, CloseableRegistry snapshotRegistry,
            CloseableRegistry uploaded, boolean keepLocal) throws Exception {
        // Built in memory: its trailing CRC32C covers all of it, and a restore reads it whole anyway.
        DataOutputSerializer out = new DataOutputSerializer(METADATA_INITIAL_BYTES);
        LetheNativeSnapshotFormat.writeHeader(out);
        LetheNativeSnapshotFormat.writeFiles(out, files);
        // No stream compression: the meta stream is small, and tables are read in place.
        new KeyedBackendSerializationProxy<>(keySerializer, resources.metaInfos, false).write(out);
        LetheNativeSnapshotFormat.writeEngineQueues(out, resources.engineQueues);
        for (HeapPriorityQueueStateSnapshot<?> q : resources.queueSnapshots) {
            StateKeyGroupWriter writer = q.getKeyGroupWriter();
            for (int kg = keyGroupRange.getStartKeyGroup(); kg <= keyGroupRange.getEndKeyGroup(); kg++) {
                writer.writeStateInKeyGroup(out, kg);
            }
        }
        LetheNativeSnapshotFormat.writeFloors(out, resources.floors);
        LetheNativeSnapshotFormat.writeWindow(out, resources.window);
        LetheNativeSnapshotFormat.writeChecksum(out);

        CheckpointStreamWithResultProvider stream = keepLocal
                ? CheckpointStreamWithResultProvider.createDuplicatingStream(checkpointId,
                        CheckpointedStateScope.EXCLUSIVE, streamFactory,
                        localRecovery.getLocalStateDirectoryProvider().orElseThrow(LocalRecoveryConfig.localRecoveryNotEnabled()))
                : CheckpointStreamWithResultProvider.createSimpleStream(CheckpointedStateScope.EXCLUSIVE, streamFactory);
        snapshotRegistry.registerCloseable(stream);
        try {
            stream.getCheckpointOutputStream().write(out.getSharedBuffer(), 0, out.length());
            if (!snapshotRegistry.unregisterCloseable(stream)) {
                throw new IOException("The checkpoint was cancelled while its metadata was written");
            }
            SnapshotResult<StreamStateHandle> result = stream.closeAndFinalizeCheckpointStreamResult();
            stream = null;
            uploaded.registerCloseable(() -> StateUtil.discardStateObjectQuietly(result));
            return result;
        } finally {
            if (stream != null && snapshotRegistry.unregisterCloseable(stream)) {
                IOUtils.closeQuietly(stream);
            }
        }
    }

    /** A completed checkpoint becomes the base of the next incremental one. */
    public void notifyCheckpointComplete(long checkpointId) {
        synchronized (uploadedTables) {
            // Savepoints are not remembered, so they never become a base (FLINK-23949).
            if (checkpointId > lastCompletedCheckpointId && uploadedTables.containsKey(checkpointId)) {
                uploadedTables.headMap(checkpointId).clear();
                lastCompletedCheckpointId = checkpointId;
            }
        }
    }

    public void notifyCheckpointAborted(long checkpointId) {
        synchronized (uploadedTables) {
            uploadedTables.remove(checkpointId);
        }
    }
}
