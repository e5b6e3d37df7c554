package io.lethe.flink.timers;

import io.lethe.engine.ColumnFamilyHandle;
import io.lethe.engine.ColumnFamilyOptions;
import io.lethe.engine.LetheDb;
import io.lethe.engine.LetheException;

import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSchemaCompatibility;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.Keyed;
import org.apache.flink.runtime.state.PriorityComparable;
import org.apache.flink.runtime.state.RegisteredPriorityQueueStateBackendMetaInfo;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueElement;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot;
import org.apache.flink.streaming.api.operators.TimerSerializer;
import org.apache.flink.util.FlinkRuntimeException;
import org.apache.flink.util.StateMigrationException;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The timer queues of one keyed backend kept in its engine, by name, in registration order: each
 * with a column family of its own and a {@link LetheTimerQueue} over it. A restore registers the
 * snapshot's meta infos first; the queue opens when the operator asks for it, with the serializer
 * checked against the restored one, and starts from its {@link QueueRecord}.
 */
public final class EngineTimerQueues {
    /** A queue's meta info, and the queue once the operator asked for it (null before). */
    private record Entry(RegisteredPriorityQueueStateBackendMetaInfo<?> meta, LetheTimerQueue<?> queue) {}

    private final LetheDb db;
    private final ColumnFamilyOptions columnFamilyOptions;
    private final KeyGroupRange range;
    private final int numberOfKeyGroups;
    private final int keyGroupPrefixBytes;
    private final TimerQueueSettings settings;
    private final Map<String, QueueRecord> restored;
    private final Map<String, Entry> queues = new LinkedHashMap<>();

    /** @param restored what the snapshot says of each queue, by name (empty for a fresh backend) */
    public EngineTimerQueues(LetheDb db, ColumnFamilyOptions columnFamilyOptions, KeyGroupRange range,
            int numberOfKeyGroups, int keyGroupPrefixBytes, TimerQueueSettings settings,
            Map<String, QueueRecord> restored) {
        this.db = db;
        this.columnFamilyOptions = columnFamilyOptions;
        this.range = range;
        this.numberOfKeyGroups = numberOfKeyGroups;
        this.keyGroupPrefixBytes = keyGroupPrefixBytes;
        this.settings = settings;
        this.restored = restored;
    }

    /** Registers a queue of a snapshot by its meta info; its queue opens on {@link #create}. */
    public void registerRestored(StateMetaInfoSnapshot snapshot) {
        queues.putIfAbsent(snapshot.getName(),
                new Entry(new RegisteredPriorityQueueStateBackendMetaInfo<>(snapshot), null));
    }

    /**
     * The queue named {@code name}, opened with its column family the first time it is asked for.
     * A restored queue's serializer is checked as Flink's RocksDB backend checks it: an incompatible
     * one fails, and none is migrated (rows are the elements' bytes).
     */
    @SuppressWarnings("unchecked")
    public <T extends HeapPriorityQueueElement & PriorityComparable<? super T> & Keyed<?>> LetheTimerQueue<T> create(
            String name, TypeSerializer<T> serializer, boolean allowFutureMetadataUpdates) {
        Entry existing = queues.get(name);
        RegisteredPriorityQueueStateBackendMetaInfo<T> meta;
        if (existing == null) {
            meta = new RegisteredPriorityQueueStateBackendMetaInfo<>(name, serializer);
        } else {
            meta = (RegisteredPriorityQueueStateBackendMetaInfo<T>) existing.meta();
            if (existing.queue() == null || !serializer.equals(meta.getElementSerializer())) {
                TypeSerializerSchemaCompatibility<T> compat = meta.updateElementSerializer(serializer);
                if (compat.isIncompatible()) {
                    throw new FlinkRuntimeException(
                            new StateMigrationException("The new priority queue serializer must not be incompatible."));
                }
            }
        }
        if (allowFutureMetadataUpdates) {
            meta = meta.withSerializerUpgradesAllowed();
        }
        LetheTimerQueue<T> queue = existing != null && existing.queue() != null
                ? (LetheTimerQueue<T>) existing.queue()
                : open(name, serializer);
        queues.put(name, new Entry(meta, queue));
        return queue;
    }

    private <T extends HeapPriorityQueueElement & PriorityComparable<? super T> & Keyed<?>> LetheTimerQueue<T> open(
            String name, TypeSerializer<T> serializer) {
        try {
            ColumnFamilyHandle cf = db.columnFamily(name);
            if (cf == null) {
                cf = db.createColumnFamily(name, columnFamilyOptions);
            }
            TimerStore store = new TimerStore(db, cf, keyGroupPrefixBytes, serializer instanceof TimerSerializer);
            QueueRecord record = restored.getOrDefault(name, QueueRecord.EMPTY);
            store.raiseStickyBelow(record.stickyBelow());
            LetheTimerQueue<T> queue = new LetheTimerQueue<>(store, serializer, range, numberOfKeyGroups,
                    settings.cacheSize(), record.lastPolled());
            if (settings.countPending()) {
                queue.startCounting();
            }
            return queue;
        } catch (LetheException e) {
            throw new FlinkRuntimeException("Failed to open the timer queue " + name + " in Lethe", e);
        }
    }

    /** Whether a queue of this name is registered. */
    public boolean contains(String name) {
        return queues.containsKey(name);
    }

    /**
     * Before a snapshot: hands every buffered timer write to the engine and moves each queue's
     * horizon to its head, so that no fired timer is in the snapshot's view.
     */
    public void prepareSnapshot() throws LetheException {
        for (Entry e : queues.values()) {
            if (e.queue() != null) {
                e.queue().expirePolled();
            }
        }
    }

    /** The queues' meta infos, in registration order. */
    public List<StateMetaInfoSnapshot> metaInfoSnapshots() {
        List<StateMetaInfoSnapshot> result = new ArrayList<>();
        for (Entry e : queues.values()) {
            result.add(e.meta().snapshot());
        }
        return result;
    }

    /** What a restore needs of each queue beyond its rows; call after {@link #prepareSnapshot()}. */
    public Map<String, QueueRecord> records() {
        Map<String, QueueRecord> result = new LinkedHashMap<>();
        for (Map.Entry<String, Entry> e : queues.entrySet()) {
            LetheTimerQueue<?> q = e.getValue().queue();
            // A restored queue the operator has not asked for yet keeps its restored record.
            result.put(e.getKey(), q == null ? restored.getOrDefault(e.getKey(), QueueRecord.EMPTY)
                    : new QueueRecord(q.store().stickyBelow(), q.polledAboveHorizon()));
        }
        return result;
    }

    /** The names of the queues (their column families), in registration order. */
    public Collection<String> names() {
        return new ArrayList<>(queues.keySet());
    }

    /** Forgets every queue (the backend is disposed). */
    public void clear() {
        queues.clear();
    }
}
