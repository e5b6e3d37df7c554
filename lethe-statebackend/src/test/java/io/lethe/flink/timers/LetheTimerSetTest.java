package io.lethe.flink.timers;

import io.lethe.engine.ColumnFamilyOptions;
import io.lethe.engine.DbOptions;
import io.lethe.engine.LetheDb;

import org.apache.flink.runtime.state.InternalPriorityQueue;
import org.apache.flink.runtime.state.InternalPriorityQueueTestBase;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Flink's own priority-queue suite on engine timer queues: ordering, set semantics, removal, bulk
 * adds and iteration. Each key group caches only 4 rows, so the suite's larger queues refill from
 * the engine and evict to it.
 */
class LetheTimerSetTest extends InternalPriorityQueueTestBase {
    @TempDir
    Path dir;

    private final List<LetheDb> dbs = new ArrayList<>();

    @Override
    protected InternalPriorityQueue<TestElement> newPriorityQueue(int initialCapacity) {
        try {
            LetheDb db = LetheDb.open(dir.resolve("db" + dbs.size()).toString(), DbOptions.builder().useWal(false).build());
            dbs.add(db);
            TimerStore store = new TimerStore(db, db.createColumnFamily("timers", ColumnFamilyOptions.DEFAULT), 1, true);
            return new LetheTimerQueue<>(store, TestElementSerializer.INSTANCE, KEY_GROUP_RANGE,
                    KEY_GROUP_RANGE.getNumberOfKeyGroups(), 4, Map.of(), KEY_EXTRACTOR_FUNCTION,
                    TEST_ELEMENT_PRIORITY_COMPARATOR);
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
    }

    @Override
    protected boolean testSetSemanticsAgainstDuplicateElements() {
        return true;
    }

    @AfterEach
    void closeEngines() {
        dbs.forEach(LetheDb::close);
        dbs.clear();
    }
}
