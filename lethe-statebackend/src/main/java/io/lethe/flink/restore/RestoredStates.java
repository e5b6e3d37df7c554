package io.lethe.flink.restore;

import io.lethe.engine.ColumnFamilyHandle;
import io.lethe.engine.LetheDb;
import io.lethe.flink.expiry.WindowExpiry;
import io.lethe.flink.state.RegisteredState;
import io.lethe.flink.state.StateRegistry;
import io.lethe.flink.timers.QueueRecord;

import org.apache.flink.runtime.state.KeyExtractorFunction;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.RegisteredPriorityQueueStateBackendMetaInfo;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueSetFactory;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueSnapshotRestoreWrapper;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The states a restore registers for the keyed backend it builds: key-value states with their
 * column families (named after the state), heap timer queues, and timer queues kept in the engine
 * (their meta infos and records, for the backend's {@code EngineTimerQueues}). The first
 * registration of a name wins; later snapshots of the same state (other handles when rescaling)
 * reuse it.
 */
public final class RestoredStates {
    private final KeyGroupRange keyGroupRange;
    private final int numberOfKeyGroups;
    private final StateRegistry kvStates;
    private final Map<String, HeapPriorityQueueSnapshotRestoreWrapper<?>> queues;
    private final HeapPriorityQueueSetFactory queueFactory;
    private final WindowExpiry window;
    private final boolean engineTimers;
    private final Map<String, StateMetaInfoSnapshot> engineQueues = new LinkedHashMap<>();
    private final Map<String, List<QueueRecord>> engineQueueRecords = new LinkedHashMap<>();

    /** @param engineTimers whether the backend keeps its timers in the engine (else on the heap) */
    public RestoredStates(KeyGroupRange keyGroupRange, int numberOfKeyGroups, StateRegistry kvStates,
            Map<String, HeapPriorityQueueSnapshotRestoreWrapper<?>> queues, HeapPriorityQueueSetFactory queueFactory,
            WindowExpiry window, boolean engineTimers) {
        this.window = window;
        this.engineTimers = engineTimers;
        this.keyGroupRange = keyGroupRange;
        this.numberOfKeyGroups = numberOfKeyGroups;
        this.kvStates = kvStates;
        this.queues = queues;
        this.queueFactory = queueFactory;
    }

    /** The window expiry of the operator restored (window contents carry window delete keys). */
    public WindowExpiry window() {
        return window;
    }

    public KeyGroupRange keyGroupRange() {
        return keyGroupRange;
    }

    public int numberOfKeyGroups() {
        return numberOfKeyGroups;
    }

    public RegisteredState kvState(String name) {
        return kvStates.get(name);
    }

    /**
     * Registers a key-value state, creating its column family in {@code db} if missing.
     *
     * @param fromSavepoint whether its entries come from a canonical savepoint (not a native checkpoint)
     */
    public RegisteredState registerKeyValueState(LetheDb db, StateMetaInfoSnapshot meta, boolean fromSavepoint)
            throws IOException {
        return kvStates.registerRestored(db, meta, fromSavepoint);
    }

    public boolean engineTimers() {
        return engineTimers;
    }

    /**
     * Registers a timer queue the snapshot kept in the engine, with what its snapshot says of it,
     * and returns its column family in {@code db} (created if missing).
     */
    public ColumnFamilyHandle registerEngineQueue(LetheDb db, StateMetaInfoSnapshot meta, QueueRecord record)
            throws IOException {
        if (!engineTimers) {
            throw new IOException("The snapshot keeps the timers of " + meta.getName() + " in the engine"
                    + " (state.backend.lethe.timer-service.factory: LETHE), and this backend keeps them on the heap."
                    + " Restore it with LETHE, or switch through a canonical savepoint.");
        }
        engineQueues.putIfAbsent(meta.getName(), meta);
        engineQueueRecords.computeIfAbsent(meta.getName(), n -> new ArrayList<>()).add(record);
        ColumnFamilyHandle cf = db.columnFamily(meta.getName());
        return cf != null ? cf : db.createColumnFamily(meta.getName(), kvStates.columnFamilyOptions());
    }

    /** The meta infos of the timer queues kept in the engine, in registration order. */
    public Iterable<StateMetaInfoSnapshot> engineQueues() {
        return engineQueues.values();
    }

    /** Per engine timer queue, the records of every snapshot restored, merged. */
    public Map<String, QueueRecord> engineQueueRecords() {
        Map<String, QueueRecord> merged = new LinkedHashMap<>();
        engineQueueRecords.forEach((name, records) -> merged.put(name, QueueRecord.merge(records)));
        return merged;
    }

    /** Registers a heap timer queue. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    public HeapPriorityQueueSnapshotRestoreWrapper<?> registerQueue(StateMetaInfoSnapshot meta) {
        return queues.computeIfAbsent(meta.getName(), n -> {
            RegisteredPriorityQueueStateBackendMetaInfo info = new RegisteredPriorityQueueStateBackendMetaInfo<>(meta);
            return new HeapPriorityQueueSnapshotRestoreWrapper(
                    queueFactory.create(info.getName(), info.getElementSerializer()), info,
                    KeyExtractorFunction.forKeyedObjects(), keyGroupRange, numberOfKeyGroups);
        });
    }
}
