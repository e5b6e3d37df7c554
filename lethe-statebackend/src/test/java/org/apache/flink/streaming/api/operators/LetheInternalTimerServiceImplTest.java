package org.apache.flink.streaming.api.operators;

import io.lethe.engine.ColumnFamilyOptions;
import io.lethe.engine.DbOptions;
import io.lethe.engine.LetheDb;
import io.lethe.flink.timers.EngineTimerQueues;
import io.lethe.flink.timers.TimerQueueSettings;

import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.runtime.state.CompositeKeySerializationUtils;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupedInternalPriorityQueue;
import org.apache.flink.runtime.state.Keyed;
import org.apache.flink.runtime.state.PriorityComparable;
import org.apache.flink.runtime.state.PriorityQueueSetFactory;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueElement;
import org.apache.flink.util.FileUtils;
import org.junit.jupiter.api.AfterAll;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Flink's own tests of its timer service (event and processing time: registration, deduplication,
 * deletion, firing order, iteration, snapshots by key group and restores onto other key-group
 * ranges), run on Lethe's engine timer queues instead of heap queues, with a cache of one row per
 * key group so that the tests' timers also live beyond it. It lives in Flink's package because the
 * base class and its constructor are package-private.
 */
class LetheInternalTimerServiceImplTest extends InternalTimerServiceImplTest {
    /** Rows cached per key group: one, so that a key group's second timer already lives beyond it. */
    private static final int CACHE_SIZE = 1;
    private static final List<LetheDb> OPENED = new ArrayList<>();
    private static final List<Path> DIRECTORIES = new ArrayList<>();

    LetheInternalTimerServiceImplTest(int startKeyGroup, int endKeyGroup, int maxParallelism) {
        super(startKeyGroup, endKeyGroup, maxParallelism);
    }

    /**
     * Queues on Lethe's engine. Each {@code create} gets a queue over a fresh, empty engine, as the
     * base class's heap factory gives a new queue each time: its rebalancing test builds three timer
     * services from one factory. (A backend's factory returns the queue it has registered instead.)
     */
    @Override
    protected PriorityQueueSetFactory createQueueFactory(KeyGroupRange range, int numKeyGroups) {
        return new PriorityQueueSetFactory() {
            @Override
            public <T extends HeapPriorityQueueElement & PriorityComparable<? super T> & Keyed<?>>
                    KeyGroupedInternalPriorityQueue<T> create(String name, TypeSerializer<T> serializer) {
                EngineTimerQueues queues = new EngineTimerQueues(freshEngine(), ColumnFamilyOptions.DEFAULT, range,
                        numKeyGroups, CompositeKeySerializationUtils.computeRequiredBytesInKeyGroupPrefix(numKeyGroups),
                        new TimerQueueSettings(CACHE_SIZE, false), Map.of());
                return queues.create(name, serializer, false);
            }
        };
    }

    private static LetheDb freshEngine() {
        try {
            Path dir = Files.createTempDirectory("lethe-timer-service-test");
            DIRECTORIES.add(dir);
            LetheDb db = LetheDb.open(dir.resolve("db").toString(), DbOptions.builder().useWal(false).build());
            OPENED.add(db);
            return db;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @AfterAll
    static void closeEngines() throws IOException {
        OPENED.forEach(LetheDb::close);
        OPENED.clear();
        for (Path dir : DIRECTORIES) {
            FileUtils.deleteDirectory(dir.toFile());
        }
        DIRECTORIES.clear();
    }
}
