package io.lethe.flink.timers;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lethe.engine.ColumnFamilyOptions;
import io.lethe.engine.DbOptions;
import io.lethe.engine.LetheDb;

import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot;
import org.apache.flink.streaming.api.operators.TimerHeapInternalTimer;
import org.apache.flink.streaming.api.operators.TimerSerializer;
import org.apache.flink.util.FlinkRuntimeException;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * The backend's registry of engine timer queues: a column family per queue, the element serializer
 * checked on re-registration, and a queue that continues from its snapshot record after a restore
 * from an engine checkpoint (its fired timers stay fired, its pending ones fire).
 */
class EngineTimerQueuesTest {
    private static final KeyGroupRange RANGE = new KeyGroupRange(0, 9);
    private static final TimerSerializer<Long, VoidNamespace> SERIALIZER =
            new TimerSerializer<>(LongSerializer.INSTANCE, VoidNamespaceSerializer.INSTANCE);
    private static final String NAME = "_timer_state/event_window-timers";

    @TempDir
    Path dir;

    private EngineTimerQueues registry(LetheDb db, Map<String, QueueRecord> restored) {
        return new EngineTimerQueues(db, ColumnFamilyOptions.DEFAULT, RANGE, 10, 1,
                new TimerQueueSettings(8, false), restored);
    }

    @Test
    void aQueueContinuesFromItsRecordAfterARestore() throws Exception {
        Map<String, QueueRecord> records;
        String checkpoint = dir.resolve("cp").toString();
        try (LetheDb db = LetheDb.open(dir.resolve("db").toString(), DbOptions.builder().useWal(false).build())) {
            EngineTimerQueues queues = registry(db, Map.of());
            LetheTimerQueue<TimerHeapInternalTimer<Long, VoidNamespace>> q = queues.create(NAME, SERIALIZER, false);
            assertSame(q, queues.create(NAME, SERIALIZER, false), "registered once");
            for (long key = 0; key < 100; key++) {
                q.add(new TimerHeapInternalTimer<>(1000, key, VoidNamespace.INSTANCE));
                q.add(new TimerHeapInternalTimer<>(2000, key, VoidNamespace.INSTANCE));
            }
            for (int i = 0; i < 40; i++) {
                assertEquals(1000, q.poll().getTimestamp()); // part of one time's timers fired
            }
            queues.prepareSnapshot();
            records = roundTrip(queues.records());
            assertTrue(records.get(NAME).lastPolled().size() > 0, "key groups polled part-way are recorded");
            List<StateMetaInfoSnapshot> metas = queues.metaInfoSnapshots();
            assertEquals(StateMetaInfoSnapshot.BackendStateType.PRIORITY_QUEUE, metas.get(0).getBackendStateType());
            db.checkpoint(checkpoint);
        }
        try (LetheDb db = LetheDb.open(checkpoint, DbOptions.builder().useWal(false).build())) {
            LetheTimerQueue<TimerHeapInternalTimer<Long, VoidNamespace>> q =
                    registry(db, records).create(NAME, SERIALIZER, false);
            assertEquals(160, q.size());
            int at1000 = 0;
            while (q.peek().getTimestamp() == 1000) {
                q.poll();
                at1000++;
            }
            assertEquals(60, at1000, "every timer at 1000 fires once");
        }
    }

    @Test
    void aRestoredQueueRejectsAnIncompatibleSerializer() throws Exception {
        try (LetheDb db = LetheDb.open(dir.resolve("db").toString(), DbOptions.builder().useWal(false).build())) {
            EngineTimerQueues first = registry(db, Map.of());
            first.create(NAME, SERIALIZER, false);
            assertTrue(db.columnFamily(NAME) != null, "a column family per queue");
            StateMetaInfoSnapshot meta = first.metaInfoSnapshots().get(0);

            EngineTimerQueues restored = registry(db, Map.of());
            restored.registerRestored(meta);
            TimerSerializer<String, VoidNamespace> other =
                    new TimerSerializer<>(StringSerializer.INSTANCE, VoidNamespaceSerializer.INSTANCE);
            assertThrows(FlinkRuntimeException.class, () -> restored.create(NAME, (TimerSerializer) other, false));

            EngineTimerQueues compatible = registry(db, Map.of());
            compatible.registerRestored(meta);
            assertTrue(compatible.create(NAME, SERIALIZER, false).isEmpty());
        }
    }

    @Test
    void recordsRoundTripAndMergeByKeyGroup() throws Exception {
        QueueRecord a = new QueueRecord(5, Map.of(1, new byte[] {1, 2}, 2, new byte[] {3}));
        QueueRecord b = new QueueRecord(9, Map.of(7, new byte[] {4}));
        QueueRecord merged = QueueRecord.merge(List.of(a, roundTrip(Map.of("q", b)).get("q")));
        assertEquals(9, merged.stickyBelow(), "the highest sticky bound");
        assertArrayEquals(new byte[] {1, 2}, merged.lastPolled().get(1));
        assertArrayEquals(new byte[] {4}, merged.lastPolled().get(7));
        assertEquals(3, merged.lastPolled().size());
    }

    private static Map<String, QueueRecord> roundTrip(Map<String, QueueRecord> records) throws Exception {
        DataOutputSerializer out = new DataOutputSerializer(64);
        for (QueueRecord r : records.values()) {
            r.writeTo(out);
        }
        DataInputDeserializer in = new DataInputDeserializer(out.getCopyOfBuffer());
        Map<String, QueueRecord> result = new java.util.LinkedHashMap<>();
        for (String name : records.keySet()) {
            result.put(name, QueueRecord.readFrom(in));
        }
        return result;
    }
}
