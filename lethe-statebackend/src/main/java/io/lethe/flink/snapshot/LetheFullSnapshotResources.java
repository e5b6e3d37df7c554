package io.lethe.flink.snapshot;

import io.lethe.engine.ColumnFamilyHandle;
import io.lethe.engine.LetheDb;
import io.lethe.engine.ReadOptions;
import io.lethe.engine.Snapshot;
import io.lethe.flink.timers.QueueRecord;
import io.lethe.flink.timers.RowCopy;

import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.runtime.state.FullSnapshotResources;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyValueStateIterator;
import org.apache.flink.runtime.state.StreamCompressionDecorator;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueStateSnapshot;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * What a full snapshot (a checkpoint in Flink's canonical format, or a canonical savepoint)
 * reads: the state meta infos and, at one engine snapshot taken in the synchronous phase, every
 * key-value column family and every timer queue kept in the engine (without its fired timers the
 * horizon has not removed yet), followed by the heap timer queues' snapshots.
 */
public final class LetheFullSnapshotResources<K> implements FullSnapshotResources<K> {
    /**
     * How long an engine iterator of the snapshot reads before it is opened again at the same
     * snapshot, letting go of the memtables flushed and the files compacted since it began.
     */
    static final long ITERATOR_REFRESH_NANOS = TimeUnit.MILLISECONDS.toNanos(250);

    private final LetheDb db;
    private final Snapshot snapshot;
    private final List<ColumnFamilyHandle> columnFamilies;
    private final Map<String, QueueRecord> engineTimers;
    private final List<HeapPriorityQueueStateSnapshot<?>> queues;
    private final List<StateMetaInfoSnapshot> metaInfos;
    private final KeyGroupRange keyGroupRange;
    private final TypeSerializer<K> keySerializer;
    private final StreamCompressionDecorator compression;
    private final int keyGroupPrefixBytes;

    /**
     * @param engineTimers the timer queues kept in the engine, by name (their column families), with
     *     their records
     * @param metaInfos the key-value states' meta infos in column family order, then the engine
     *     timer queues', then the heap queues'
     */
    public LetheFullSnapshotResources(LetheDb db, List<ColumnFamilyHandle> columnFamilies,
            Map<String, QueueRecord> engineTimers, List<HeapPriorityQueueStateSnapshot<?>> queues,
            List<StateMetaInfoSnapshot> metaInfos, KeyGroupRange keyGroupRange, TypeSerializer<K> keySerializer,
            StreamCompressionDecorator compression, int keyGroupPrefixBytes) {
        this.db = db;
        this.snapshot = db.getSnapshot();
        this.columnFamilies = columnFamilies;
        this.engineTimers = engineTimers;
        this.queues = queues;
        this.metaInfos = metaInfos;
        this.keyGroupRange = keyGroupRange;
        this.keySerializer = keySerializer;
        this.compression = compression;
        this.keyGroupPrefixBytes = keyGroupPrefixBytes;
    }

    @Override
    public List<StateMetaInfoSnapshot> getMetaInfoSnapshots() {
        return metaInfos;
    }

    @Override
    public KeyValueStateIterator createKVStateIterator() throws IOException {
        List<LetheKeyValueStateIterator.Source> sources = new ArrayList<>();
        try {
            for (ColumnFamilyHandle cf : columnFamilies) {
                sources.add(engineSource(cf, RowCopy.AS_IS));
            }
            for (Map.Entry<String, QueueRecord> q : engineTimers.entrySet()) {
                sources.add(engineSource(db.columnFamily(q.getKey()), RowCopy.timers(q.getValue(), 0)));
            }
            for (HeapPriorityQueueStateSnapshot<?> q : queues) {
                sources.add(new LetheKeyValueStateIterator.QueueSource(q, keyGroupPrefixBytes));
            }
            return new LetheKeyValueStateIterator(sources, keyGroupRange);
        } catch (IOException | RuntimeException e) {
            sources.forEach(LetheKeyValueStateIterator.Source::close);
            throw e;
        }
    }

    private LetheKeyValueStateIterator.Source engineSource(ColumnFamilyHandle cf, RowCopy rows) throws IOException {
        ReadOptions atSnapshot = ReadOptions.atSnapshot(snapshot);
        return new LetheKeyValueStateIterator.EngineSource(
                () -> db.newIterator(atSnapshot, cf), ITERATOR_REFRESH_NANOS, keyGroupPrefixBytes, rows);
    }

    @Override
    public KeyGroupRange getKeyGroupRange() {
        return keyGroupRange;
    }

    @Override
    public TypeSerializer<K> getKeySerializer() {
        return keySerializer;
    }

    @Override
    public StreamCompressionDecorator getStreamCompressionDecorator() {
        return compression;
    }

    @Override
    public void release() {
        snapshot.close();
        queues.forEach(HeapPriorityQueueStateSnapshot::release);
    }
}
