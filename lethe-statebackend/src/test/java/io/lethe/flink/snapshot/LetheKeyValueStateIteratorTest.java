package io.lethe.flink.snapshot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lethe.engine.ColumnFamilyHandle;
import io.lethe.engine.ColumnFamilyOptions;
import io.lethe.engine.DbOptions;
import io.lethe.engine.LetheDb;
import io.lethe.engine.MemoryBudget;
import io.lethe.engine.ReadOptions;
import io.lethe.engine.Snapshot;
import io.lethe.flink.timers.RowCopy;

import org.apache.flink.runtime.state.KeyGroupRange;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * A full snapshot's walk over the engine reads the state of its engine snapshot while the job goes
 * on writing, flushing, compacting and expiring; iterators opened again along the way see the same
 * entries and let go of the memtables flushed since they began.
 */
class LetheKeyValueStateIteratorTest {
    private static final int KEY_GROUPS = 8;
    private static final int KEYS_PER_GROUP = 400;
    private static final long NEVER = Long.MAX_VALUE;

    @TempDir Path dir;

    /** Every step opens the iterator again; writes of every kind go on meanwhile. */
    @Test
    void iteratorsOpenedAgainReadTheSnapshotWhileWritesGoOn() throws Exception {
        try (MemoryBudget budget = MemoryBudget.create(4L << 20, 0.5);
                LetheDb db = LetheDb.open(dir.toString(), options(budget))) {
            ColumnFamilyHandle cf = db.createColumnFamily("state", ColumnFamilyOptions.builder().build());
            fill(db, cf, 'a');
            db.flush();
            fill(db, cf, 'b'); // half of them again, in the memtable
            try (Snapshot snapshot = db.getSnapshot()) {
                List<String> expected = walk(db, cf, snapshot, NEVER, null);
                assertEquals(KEY_GROUPS * KEYS_PER_GROUP, expected.size());
                Random random = new Random(42);
                List<String> refreshed = walk(db, cf, snapshot, 0, step -> churn(db, cf, random, step));
                assertEquals(expected, refreshed);
            }
        }
    }

    /** A memtable flushed during the walk is let go at the next refresh; without one it stays held. */
    @Test
    void aFlushedMemtableIsLetGoAtTheNextRefresh() throws Exception {
        for (long refresh : new long[] {0, NEVER}) {
            try (MemoryBudget budget = MemoryBudget.create(8L << 20, 0.5);
                    LetheDb db = LetheDb.open(dir.resolve("r" + refresh).toString(), options(budget))) {
                ColumnFamilyHandle cf = db.createColumnFamily("state", ColumnFamilyOptions.builder().build());
                fill(db, cf, 'a'); // about 0.4 MiB in the memtable, none flushed
                long[] heldAfterFlush = {-1};
                try (Snapshot snapshot = db.getSnapshot()) {
                    walk(db, cf, snapshot, refresh, step -> {
                        if (step == 10) {
                            db.flush();
                        } else if (step == 11) {
                            heldAfterFlush[0] = budget.usage().writeBuffers();
                        }
                    });
                }
                if (refresh == 0) {
                    assertEquals(0, heldAfterFlush[0], "write buffers held after the refresh");
                } else {
                    assertTrue(heldAfterFlush[0] > (256 << 10), "held without refreshes: " + heldAfterFlush[0]);
                }
            }
        }
    }

    interface Step {
        void run(int step) throws Exception;
    }

    private static DbOptions options(MemoryBudget budget) {
        return DbOptions.builder().memoryBudget(budget).writeBufferSizeBytes(1L << 30).build();
    }

    private static byte[] key(int kg, int i) {
        return String.format("%c%05d", (char) kg, i).getBytes(StandardCharsets.ISO_8859_1);
    }

    /** Writes every key (tag 'a') or every other key (other tags), delete key = its index. */
    private static void fill(LetheDb db, ColumnFamilyHandle cf, char tag) throws Exception {
        for (int kg = 0; kg < KEY_GROUPS; kg++) {
            for (int i = 0; i < KEYS_PER_GROUP; i += tag == 'a' ? 1 : 2) {
                db.put(cf, key(kg, i), (tag + "-" + kg + "-" + i + "-" + "x".repeat(100)).getBytes(), i);
            }
        }
    }

    /** Overwrites, deletes, range deletes and new keys; now and then a flush, a compaction, an expiry. */
    private static void churn(LetheDb db, ColumnFamilyHandle cf, Random random, int step) throws Exception {
        int kg = random.nextInt(KEY_GROUPS);
        int i = random.nextInt(KEYS_PER_GROUP);
        db.put(cf, key(kg, i), ("c" + step).getBytes(), KEYS_PER_GROUP + step);
        db.delete(cf, key(random.nextInt(KEY_GROUPS), random.nextInt(KEYS_PER_GROUP)));
        db.put(cf, key(kg, KEYS_PER_GROUP + step), ("new" + step).getBytes(), KEYS_PER_GROUP + step);
        if (step % 97 == 0) {
            db.deleteRange(cf, key(kg, i), key(kg, i + 20));
        }
        if (step % 211 == 0) {
            db.flush();
        }
        if (step % 701 == 0) {
            db.advanceHorizon(cf, step / 10);
        }
        if (step % 1009 == 0) {
            db.compactAll();
        }
    }

    /** Every entry as "kg/key=value", in the order of the walk, running `each` before each step. */
    private static List<String> walk(LetheDb db, ColumnFamilyHandle cf, Snapshot snapshot, long refreshNanos,
            Step each) throws Exception {
        ReadOptions at = ReadOptions.atSnapshot(snapshot);
        List<String> seen = new ArrayList<>();
        List<LetheKeyValueStateIterator.Source> sources = List.of(
                new LetheKeyValueStateIterator.EngineSource(() -> db.newIterator(at, cf), refreshNanos, 1,
                        RowCopy.AS_IS));
        try (LetheKeyValueStateIterator it =
                new LetheKeyValueStateIterator(sources, new KeyGroupRange(0, KEY_GROUPS - 1))) {
            for (int step = 0; it.isValid(); step++) {
                seen.add(it.keyGroup() + "/" + new String(it.key(), StandardCharsets.ISO_8859_1) + "="
                        + new String(it.value(), StandardCharsets.ISO_8859_1));
                if (each != null) {
                    each.run(step);
                }
                it.next();
            }
        }
        return seen;
    }
}
