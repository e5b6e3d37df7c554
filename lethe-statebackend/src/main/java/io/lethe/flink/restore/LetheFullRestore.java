package io.lethe.flink.restore;

import io.lethe.engine.ColumnFamilyHandle;
import io.lethe.engine.LetheDb;
import io.lethe.engine.WriteBatch;
import io.lethe.engine.WriteOptions;
import io.lethe.flink.state.RegisteredState;
import io.lethe.flink.timers.QueueRecord;

import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.runtime.state.CompositeKeySerializationUtils;
import org.apache.flink.runtime.state.IncrementalKeyedStateHandle;
import org.apache.flink.runtime.state.KeyGroupsStateHandle;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.StateSerializerProvider;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueElement;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueSnapshotRestoreWrapper;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot;
import org.apache.flink.runtime.state.restore.FullSnapshotRestoreOperation;
import org.apache.flink.runtime.state.restore.KeyGroup;
import org.apache.flink.runtime.state.restore.KeyGroupEntry;
import org.apache.flink.runtime.state.restore.SavepointRestoreResult;
import org.apache.flink.runtime.state.restore.ThrowingIterator;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Restores full snapshots in Flink's canonical key-group format (canonical savepoints of any
 * backend, and checkpoints of the HashMap backend) into an empty engine, keeping only the key
 * groups of this subtask's range, so rescaling needs nothing more. Timer queue entries go back onto
 * heap queues, or, with timers in the engine, into their queue's column family as they are (the
 * snapshot's row is the engine's row), sticky: each leaves with a tombstone when it fires. The
 * snapshot is read through a buffer ({@link BufferedSeekableInput}).
 */
public final class LetheFullRestore<K> {
    /** Writes are batched up to this many bytes per engine call. */
    private static final int BATCH_BYTES = 4 << 20;

    private final LetheDb db;
    private final RestoredStates states;
    private final int keyGroupPrefixBytes;
    private final DataInputDeserializer in = new DataInputDeserializer();

    public LetheFullRestore(LetheDb db, RestoredStates states) {
        this.db = db;
        this.states = states;
        this.keyGroupPrefixBytes =
                CompositeKeySerializationUtils.computeRequiredBytesInKeyGroupPrefix(states.numberOfKeyGroups());
    }

    public void restore(Collection<KeyedStateHandle> handles, ClassLoader classLoader,
            StateSerializerProvider<K> keySerializerProvider) throws Exception {
        List<KeyedStateHandle> buffered = new ArrayList<>(handles.size());
        for (KeyedStateHandle h : handles) {
            if (h == null) {
                continue;
            }
            if (h instanceof IncrementalKeyedStateHandle || !(h instanceof KeyGroupsStateHandle)) {
                throw new IllegalStateException("The Lethe state backend cannot restore " + h.getClass().getSimpleName()
                        + ": it restores its own native checkpoints and snapshots in Flink's canonical format."
                        + " Native checkpoints of another backend (RocksDB, ForSt) cannot be read;"
                        + " take a canonical savepoint with that backend and restore from it.");
            }
            buffered.add(readBuffered((KeyGroupsStateHandle) h));
        }
        FullSnapshotRestoreOperation<K> operation =
                new FullSnapshotRestoreOperation<>(states.keyGroupRange(), classLoader, buffered, keySerializerProvider);
        try (ThrowingIterator<SavepointRestoreResult> results = operation.restore()) {
            while (results.hasNext()) {
                apply(results.next());
            }
        }
    }

    /** The same key groups, their stream read through a buffer. */
    private static KeyGroupsStateHandle readBuffered(KeyGroupsStateHandle groups) {
        StreamStateHandle buffered = new DecoratedStreamHandle(groups.getDelegateStateHandle(),
                in -> new BufferedSeekableInput(in, BufferedSeekableInput.RESTORE_BUFFER_BYTES));
        return KeyGroupsStateHandle.restore(groups.getGroupRangeOffsets(), buffered, groups.getStateHandleId());
    }

    private void apply(SavepointRestoreResult result) throws Exception {
        List<StateMetaInfoSnapshot> metas = result.getStateMetaInfoSnapshots();
        Map<Integer, RegisteredState> kvStates = new HashMap<>();
        Map<Integer, HeapPriorityQueueSnapshotRestoreWrapper<?>> restoredQueues = new HashMap<>();
        Map<Integer, ColumnFamilyHandle> engineQueues = new HashMap<>();
        for (int i = 0; i < metas.size(); i++) {
            StateMetaInfoSnapshot meta = metas.get(i);
            if (meta.getBackendStateType() == StateMetaInfoSnapshot.BackendStateType.PRIORITY_QUEUE) {
                if (states.engineTimers()) {
                    engineQueues.put(i, states.registerEngineQueue(db, meta, QueueRecord.EMPTY));
                } else {
                    restoredQueues.put(i, states.registerQueue(meta));
                }
            } else {
                kvStates.put(i, states.registerKeyValueState(db, meta, true));
            }
        }
        WriteBatch batch = new WriteBatch(64 * 1024);
        try (ThrowingIterator<KeyGroup> groups = result.getRestoredKeyGroups()) {
            while (groups.hasNext()) {
                KeyGroup group = groups.next();
                try (ThrowingIterator<KeyGroupEntry> entries = group.getKeyGroupEntries()) {
                    while (entries.hasNext()) {
                        KeyGroupEntry e = entries.next();
                        HeapPriorityQueueSnapshotRestoreWrapper<?> queue = restoredQueues.get(e.getKvStateId());
                        if (queue != null) {
                            addToQueue(queue, e.getKey());
                            continue;
                        }
                        ColumnFamilyHandle timers = engineQueues.get(e.getKvStateId());
                        if (timers != null) {
                            batch.put(timers, e.getKey(), e.getValue(), LetheDb.MAX_DELETE_KEY);
                            continue;
                        }
                        RegisteredState state = kvStates.get(e.getKvStateId());
                        if (state == null) {
                            throw new IllegalStateException("Unknown state id in snapshot: " + e.getKvStateId());
                        }
                        long deleteKey =
                                state.expiry().issueRestored(e.getKey(), e.getValue(),
                                        state.metaInfo().getStateSerializer());
                        batch.put(state.columnFamily(), e.getKey(), e.getValue(), deleteKey);
                        if (batch.sizeInBytes() >= BATCH_BYTES) {
                            db.write(WriteOptions.NO_WAL, batch);
                            batch.clear();
                        }
                    }
                }
            }
        }
        db.write(WriteOptions.NO_WAL, batch);
    }

    @SuppressWarnings("unchecked")
    private <T extends HeapPriorityQueueElement> void addToQueue(HeapPriorityQueueSnapshotRestoreWrapper<?> queue,
            byte[] key) throws Exception {
        HeapPriorityQueueSnapshotRestoreWrapper<T> q = (HeapPriorityQueueSnapshotRestoreWrapper<T>) queue;
        in.setBuffer(key);
        in.skipBytesToRead(keyGroupPrefixBytes);
        q.getPriorityQueue().add(q.getMetaInfo().getElementSerializer().deserialize(in));
    }
}
