package io.lethe.flink.restore;

import io.lethe.engine.LetheDb;
import io.lethe.flink.expiry.WindowExpiry;
import io.lethe.flink.state.RegisteredState;
import io.lethe.flink.state.StateRegistry;

import org.apache.flink.runtime.state.KeyExtractorFunction;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.RegisteredPriorityQueueStateBackendMetaInfo;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueSetFactory;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueSnapshotRestoreWrapper;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot;

import java.io.IOException;
import java.util.Map;

/**
 * The states a restore registers for the keyed backend it builds: key-value states with their
 * column families (named after the state) and heap timer queues. The first registration of a
 * name wins; later snapshots of the same state (other handles when rescaling) reuse it.
 */
public final class RestoredStates {
    private final KeyGroupRange keyGroupRange;
    private final int numberOfKeyGroups;
    private final StateRegistry kvStates;
    private final Map<String, HeapPriorityQueueSnapshotRestoreWrapper<?>> queues;
    private final HeapPriorityQueueSetFactory queueFactory;
    private final WindowExpiry window;

    public RestoredStates(KeyGroupRange keyGroupRange, int numberOfKeyGroups, StateRegistry kvStates,
            Map<String, HeapPriorityQueueSnapshotRestoreWrapper<?>> queues, HeapPriorityQueueSetFactory queueFactory,
            WindowExpiry window) {
        this.window = window;
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

    /** Registers a key-value state, creating its column family in {@code db} if missing. */
    public RegisteredState registerKeyValueState(LetheDb db, StateMetaInfoSnapshot meta) throws IOException {
        return kvStates.registerRestored(db, meta);
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
