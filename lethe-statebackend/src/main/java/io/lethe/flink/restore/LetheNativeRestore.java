package io.lethe.flink.restore;

import io.lethe.engine.ColumnFamilyHandle;
import io.lethe.engine.DbOptions;
import io.lethe.engine.LetheDb;
import io.lethe.engine.LetheIterator;
import io.lethe.engine.ReadOptions;
import io.lethe.engine.WriteBatch;
import io.lethe.engine.WriteOptions;
import io.lethe.flink.snapshot.CheckpointFile;
import io.lethe.flink.snapshot.FileChecksum;
import io.lethe.flink.snapshot.FileTransfer;
import io.lethe.flink.snapshot.LetheNativeSnapshotFormat;
import io.lethe.flink.state.RegisteredState;
import io.lethe.flink.timers.QueueRecord;
import io.lethe.flink.timers.RowCopy;

import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSchemaCompatibility;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.runtime.state.CompositeKeySerializationUtils;
import org.apache.flink.runtime.state.IncrementalKeyedStateHandle;
import org.apache.flink.runtime.state.IncrementalKeyedStateHandle.HandleAndLocalPath;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedBackendSerializationProxy;
import org.apache.flink.runtime.state.StateSerializerProvider;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueElement;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueSnapshotRestoreWrapper;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot;
import org.apache.flink.util.FileUtils;
import org.apache.flink.util.IOUtils;
import org.apache.flink.util.StateMigrationException;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.File;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.UUID;

/**
 * Restores Lethe native checkpoints (the {@code IncrementalKeyedStateHandle}s written by {@link
 * io.lethe.flink.snapshot.LetheNativeSnapshotStrategy}: in the checkpoint storage, or the copy local
 * recovery keeps on the TaskManager) into the instance directory; {@link CheckpointFileFetcher}
 * brings the files.
 *
 * <p>One handle covering exactly this subtask's key groups: its files are fetched and the
 * engine opens on them unchanged, so the next incremental checkpoint can reuse them. Rescaling:
 * the handle that overlaps the new range most becomes the base and is clipped to the range with
 * one range delete per state and side (scale out); the in-range entries of every other handle are
 * copied in from a temporary engine opened on its files (scale in), as the RocksDB backend does.
 * Heap timers come from the metadata stream, filtered to the range; timers kept in the engine are
 * rows of their column family, clipped and copied like states (a copied row keeps what its
 * snapshot's record says: a fired one is left behind, and one below the target's horizon becomes
 * sticky).
 *
 * <p>Damage is found here, before the engine opens: the metadata stream is read whole and its
 * CRC32C checked, and every file's length and CRC32C are computed while it is fetched and
 * compared with those the metadata records (format version 3; older checkpoints restore
 * unchecked). The error names the checkpoint, the file and what is wrong with it.
 */
public final class LetheNativeRestore<K> {
    private static final Logger LOG = LoggerFactory.getLogger(LetheNativeRestore.class);
    private static final int BATCH_BYTES = 4 << 20;

    private final File instanceBasePath;
    private final DbOptions dbOptions;
    private final RestoredStates states;
    private final KeyGroupRange keyGroupRange;
    private final int keyGroupPrefixBytes;
    private final ClassLoader classLoader;
    private final StateSerializerProvider<K> keySerializerProvider;
    private final CloseableRegistry cancelRegistry;
    private final CheckpointFileFetcher files;

    /** The base handle's tables, when the engine is that checkpoint's state unchanged. */
    private final SortedMap<Long, List<CheckpointFile>> restoredTables = new TreeMap<>();
    private long restoredCheckpointId = -1;
    private UUID backendUid = UUID.randomUUID();
    private boolean keySerializerChecked;

    public LetheNativeRestore(File instanceBasePath, DbOptions dbOptions, RestoredStates states,
            ClassLoader classLoader, StateSerializerProvider<K> keySerializerProvider, CloseableRegistry cancelRegistry,
            FileTransfer transfer) {
        this.files = new CheckpointFileFetcher(cancelRegistry, transfer);
        this.instanceBasePath = instanceBasePath;
        this.dbOptions = dbOptions;
        this.states = states;
        this.keyGroupRange = states.keyGroupRange();
        this.keyGroupPrefixBytes =
                CompositeKeySerializationUtils.computeRequiredBytesInKeyGroupPrefix(states.numberOfKeyGroups());
        this.classLoader = classLoader;
        this.keySerializerProvider = keySerializerProvider;
        this.cancelRegistry = cancelRegistry;
    }

    /** Opens the engine in {@code dbDirectory} on the restored state; the caller owns it. */
    public LetheDb restore(List<IncrementalKeyedStateHandle> handles, File dbDirectory) throws Exception {
        IncrementalKeyedStateHandle base = chooseBase(handles);
        if (!base.getKeyGroupRange().equals(keyGroupRange) && states.window().isWindowOperator()) {
            // Rescaling a window operator: each subtask's horizon followed its own watermark, so the
            // base's horizon could hide windows another subtask still had to fire. An empty engine
            // (no horizon) takes copies of every handle's live entries instead.
            return restoreByCopying(handles, dbDirectory);
        }
        Metadata metadata = readMetadata(base);
        Map<String, FileChecksum> fetched = files.fetch(base, metadata.files(), dbDirectory);
        LetheDb db = LetheDb.open(dbDirectory.getAbsolutePath(), dbOptions);
        try {
            HandleStates baseStates = applyMetadata(base, metadata, db);
            if (base.getKeyGroupRange().equals(keyGroupRange)) {
                backendUid = base.getBackendIdentifier();
                restoredCheckpointId = base.getCheckpointId();
                List<CheckpointFile> tables = new ArrayList<>();
                for (HandleAndLocalPath f : base.getSharedStateHandles()) {
                    // What was fetched is what the handle's uploads hold: the next checkpoint records
                    // it for the placeholders that refer to these tables.
                    tables.add(new CheckpointFile(f, fetched.get(f.getLocalPath())));
                }
                restoredTables.put(base.getCheckpointId(), tables);
            } else {
                clip(db, baseStates, base.getKeyGroupRange());
            }
            int n = 0;
            for (IncrementalKeyedStateHandle h : handles) {
                if (h != base) {
                    copyInRange(h, db, new File(instanceBasePath, "restore-" + n++));
                }
            }
            return db;
        } catch (Exception e) {
            db.close();
            throw e;
        }
    }

    private LetheDb restoreByCopying(List<IncrementalKeyedStateHandle> handles, File dbDirectory)
            throws Exception {
        LetheDb db = LetheDb.open(dbDirectory.getAbsolutePath(), dbOptions);
        try {
            int n = 0;
            for (IncrementalKeyedStateHandle h : handles) {
                copyInRange(h, db, new File(instanceBasePath, "restore-" + n++));
            }
            return db;
        } catch (Exception e) {
            db.close();
            throw e;
        }
    }

    /** Backend id, restored table files and checkpoint id for the next incremental checkpoint. */
    public UUID backendUid() {
        return backendUid;
    }

    public SortedMap<Long, List<CheckpointFile>> restoredTables() {
        return Collections.unmodifiableSortedMap(restoredTables);
    }

    public long restoredCheckpointId() {
        return restoredCheckpointId;
    }

    /** The handle with this range, else the one sharing the most key groups with it. */
    private IncrementalKeyedStateHandle chooseBase(List<IncrementalKeyedStateHandle> handles) {
        IncrementalKeyedStateHandle best = null;
        int bestOverlap = -1;
        for (IncrementalKeyedStateHandle h : handles) {
            if (h.getKeyGroupRange().equals(keyGroupRange)) {
                return h;
            }
            int overlap = h.getKeyGroupRange().getIntersection(keyGroupRange).getNumberOfKeyGroups();
            if (overlap > bestOverlap) {
                best = h;
                bestOverlap = overlap;
            }
        }
        return best;
    }

    /** A handle's metadata stream, read whole and checked, and the file checksums it records. */
    private record Metadata(int version, DataInputView in, Map<String, FileChecksum> files) {}

    private Metadata readMetadata(IncrementalKeyedStateHandle handle) throws IOException {
        StreamStateHandle meta = handle.getMetaDataStateHandle();
        String what = CheckpointFileFetcher.describe(handle) + " (Lethe metadata "
                + CheckpointFileFetcher.location(meta) + ")";
        byte[] bytes;
        FSDataInputStream stream = CheckpointFileFetcher.open(meta, what);
        cancelRegistry.registerCloseable(stream);
        try {
            bytes = stream.readAllBytes();
        } finally {
            if (cancelRegistry.unregisterCloseable(stream)) {
                IOUtils.closeQuietly(stream);
            }
        }
        LetheNativeSnapshotFormat.Checked checked = LetheNativeSnapshotFormat.check(bytes, what);
        return new Metadata(checked.version(), checked.in(),
                LetheNativeSnapshotFormat.readFiles(checked.in(), checked.version()));
    }

    /** A handle's states: key-value states by name, timer queues kept in the engine with their records. */
    private record HandleStates(List<String> kvStates, Map<String, QueueRecord> engineQueues) {
        List<String> columnFamilies() {
            List<String> all = new ArrayList<>(kvStates);
            all.addAll(engineQueues.keySet());
            return all;
        }
    }

    /**
     * Applies a handle's metadata (after its header and file checksums): registers its states in
     * {@code db} (column families are named after the states and queues) and adds its heap timers of
     * this range to the heap queues.
     */
    private HandleStates applyMetadata(IncrementalKeyedStateHandle handle, Metadata metadata, LetheDb db)
            throws Exception {
        DataInputView in = metadata.in();
        int version = metadata.version();
        KeyedBackendSerializationProxy<K> proxy = new KeyedBackendSerializationProxy<>(classLoader);
        proxy.read(in);
        checkKeySerializer(proxy);
        Map<String, QueueRecord> engineQueues = LetheNativeSnapshotFormat.readEngineQueues(in, version);
        List<String> kvStates = new ArrayList<>();
        List<HeapPriorityQueueSnapshotRestoreWrapper<?>> handleQueues = new ArrayList<>();
        for (StateMetaInfoSnapshot meta : proxy.getStateMetaInfoSnapshots()) {
            if (meta.getBackendStateType() == StateMetaInfoSnapshot.BackendStateType.PRIORITY_QUEUE) {
                QueueRecord record = engineQueues.get(meta.getName());
                if (record != null) {
                    states.registerEngineQueue(db, meta, record);
                } else {
                    handleQueues.add(states.registerQueue(meta));
                }
            } else {
                states.registerKeyValueState(db, meta, false);
                kvStates.add(meta.getName());
            }
        }
        KeyGroupRange range = handle.getKeyGroupRange();
        for (HeapPriorityQueueSnapshotRestoreWrapper<?> q : handleQueues) {
            for (int kg = range.getStartKeyGroup(); kg <= range.getEndKeyGroup(); kg++) {
                readTimers(q, in, keyGroupRange.contains(kg));
            }
        }
        for (Map.Entry<String, Long> floor : LetheNativeSnapshotFormat.readFloors(in, version, kvStates).entrySet()) {
            RegisteredState info = states.kvState(floor.getKey());
            if (info != null) {
                info.expiry().raiseFloor(floor.getValue());
            }
        }
        states.window().restore(LetheNativeSnapshotFormat.readWindow(in, version));
        return new HandleStates(kvStates, engineQueues);
    }

    private void checkKeySerializer(KeyedBackendSerializationProxy<K> proxy) throws StateMigrationException {
        if (keySerializerChecked) {
            return;
        }
        TypeSerializerSchemaCompatibility<K> compat =
                keySerializerProvider.setPreviousSerializerSnapshotForRestoredState(proxy.getKeySerializerSnapshot());
        if (compat.isCompatibleAfterMigration() || compat.isIncompatible()) {
            throw new StateMigrationException("The new key serializer must be compatible.");
        }
        keySerializerChecked = true;
    }

    @SuppressWarnings("unchecked")
    private <T extends HeapPriorityQueueElement> void readTimers(HeapPriorityQueueSnapshotRestoreWrapper<?> queue,
            DataInputView in, boolean keep) throws IOException {
        HeapPriorityQueueSnapshotRestoreWrapper<T> q = (HeapPriorityQueueSnapshotRestoreWrapper<T>) queue;
        TypeSerializer<T> serializer = q.getMetaInfo().getElementSerializer();
        int count = in.readInt();
        for (int i = 0; i < count; i++) {
            T element = serializer.deserialize(in);
            if (keep) {
                q.getPriorityQueue().add(element);
            }
        }
    }

    /** Removes the key groups of {@code current} outside this subtask's range. */
    private void clip(LetheDb db, HandleStates handleStates, KeyGroupRange current) throws IOException {
        for (String name : handleStates.columnFamilies()) {
            ColumnFamilyHandle cf = db.columnFamily(name);
            if (current.getStartKeyGroup() < keyGroupRange.getStartKeyGroup()) {
                db.deleteRange(cf, prefix(current.getStartKeyGroup()), prefix(keyGroupRange.getStartKeyGroup()));
            }
            if (current.getEndKeyGroup() > keyGroupRange.getEndKeyGroup()) {
                db.deleteRange(cf, prefix(keyGroupRange.getEndKeyGroup() + 1), prefix(current.getEndKeyGroup() + 1));
            }
        }
    }

    /** Copies the entries of this range from a handle's engine, opened temporarily in {@code dir}. */
    private void copyInRange(IncrementalKeyedStateHandle handle, LetheDb db, File dir) throws Exception {
        try {
            Metadata metadata = readMetadata(handle);
            files.fetch(handle, metadata.files(), dir);
            HandleStates handleStates = applyMetadata(handle, metadata, db);
            try (LetheDb source = LetheDb.open(dir.getAbsolutePath(), dbOptions)) {
                Set<String> copied = new HashSet<>();
                WriteBatch batch = new WriteBatch(64 * 1024);
                for (String name : handleStates.columnFamilies()) {
                    ColumnFamilyHandle from = source.columnFamily(name);
                    if (from == null || !copied.add(name)) {
                        continue;
                    }
                    ColumnFamilyHandle to = db.columnFamily(name);
                    QueueRecord queue = handleStates.engineQueues().get(name);
                    RowCopy copy = queue == null ? RowCopy.AS_IS : RowCopy.timers(queue, db.horizon(to));
                    copyRows(source, from, db, to, copy, batch);
                }
                db.write(WriteOptions.NO_WAL, batch);
            }
        } finally {
            try {
                FileUtils.deleteDirectory(dir);
            } catch (IOException e) {
                LOG.warn("Could not delete the temporary restore directory {}", dir, e);
            }
        }
    }

    /** Copies the rows of this range from one column family into another, through {@code batch}. */
    private void copyRows(LetheDb source, ColumnFamilyHandle from, LetheDb db, ColumnFamilyHandle to, RowCopy copy,
            WriteBatch batch) throws IOException {
        byte[] lower = prefix(keyGroupRange.getStartKeyGroup());
        byte[] upper = prefix(keyGroupRange.getEndKeyGroup() + 1);
        try (LetheIterator it = source.newIterator(ReadOptions.bounded(lower, upper), from)) {
            for (it.seekToFirst(); it.isValid(); it.next()) {
                byte[] key = it.key();
                if (!copy.keep(key, it.deleteKey(), keyGroupPrefixBytes)) {
                    continue;
                }
                batch.put(to, key, it.value(), copy.deleteKey(it.deleteKey()));
                if (batch.sizeInBytes() >= BATCH_BYTES) {
                    db.write(WriteOptions.NO_WAL, batch);
                    batch.clear();
                }
            }
        }
    }

    /** The key-group prefix that starts every key of key group {@code keyGroup}. */
    private byte[] prefix(int keyGroup) {
        byte[] b = new byte[keyGroupPrefixBytes];
        for (int i = 0; i < keyGroupPrefixBytes; i++) {
            b[i] = (byte) (keyGroup >>> ((keyGroupPrefixBytes - i - 1) * 8));
        }
        return b;
    }
}
