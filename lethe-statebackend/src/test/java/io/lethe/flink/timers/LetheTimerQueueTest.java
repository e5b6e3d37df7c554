package io.lethe.flink.timers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lethe.engine.ColumnFamilyHandle;
import io.lethe.engine.ColumnFamilyOptions;
import io.lethe.engine.DbOptions;
import io.lethe.engine.LetheDb;
import io.lethe.engine.LetheIterator;

import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.streaming.api.operators.TimerHeapInternalTimer;
import org.apache.flink.streaming.api.operators.TimerSerializer;
import org.apache.flink.util.CloseableIterator;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;

/**
 * Engine timer queues against a model: fired timers leave by the horizon without a tombstone each,
 * and none vanishes early or comes back, also for timers registered for a time already passed,
 * removed and registered again, or polled part-way when the queue is reopened or restored from an
 * engine checkpoint.
 */
class LetheTimerQueueTest {
    private static final KeyGroupRange RANGE = new KeyGroupRange(0, 2);
    private static final Comparator<TimerHeapInternalTimer<Long, VoidNamespace>> ORDER =
            Comparator.<TimerHeapInternalTimer<Long, VoidNamespace>>comparingLong(t -> t.getTimestamp())
                    .thenComparingLong(t -> t.getKey());
    private static final TimerSerializer<Long, VoidNamespace> SERIALIZER =
            new TimerSerializer<>(LongSerializer.INSTANCE, VoidNamespaceSerializer.INSTANCE);

    /** Flink's timer, keyed by a long. */
    private static TimerHeapInternalTimer<Long, VoidNamespace> timer(long key, long timestamp) {
        return new TimerHeapInternalTimer<>(timestamp, key, VoidNamespace.INSTANCE);
    }

    @TempDir
    Path dir;

    private LetheDb db;
    private LetheTimerQueue<TimerHeapInternalTimer<Long, VoidNamespace>> queue;
    private int checkpoints;
    /** Whether queues count their pending timers. */
    private boolean counting;

    @BeforeEach
    void open() throws Exception {
        db = LetheDb.open(dir.resolve("db").toString(), DbOptions.builder().useWal(false).build());
        db.createColumnFamily("timers", ColumnFamilyOptions.DEFAULT);
        queue = queue(Map.of());
    }

    @AfterEach
    void close() {
        db.close();
    }

    private LetheTimerQueue<TimerHeapInternalTimer<Long, VoidNamespace>> queue(Map<Integer, byte[]> lastPolled)
            throws Exception {
        TimerStore store = new TimerStore(db, db.columnFamily("timers"), 1, true);
        LetheTimerQueue<TimerHeapInternalTimer<Long, VoidNamespace>> q =
                new LetheTimerQueue<>(store, SERIALIZER, RANGE, RANGE.getNumberOfKeyGroups(), 4, lastPolled);
        if (counting) {
            q.startCounting();
        }
        return q;
    }

    /** Reopens the queue on the same engine, as a restore with the snapshot's metadata would. */
    private void reopen() throws Exception {
        queue.expirePolled();
        queue = queue(queue.polledAboveHorizon());
    }

    /** Restores the queue from an engine checkpoint taken now. */
    private void restoreFromCheckpoint() throws Exception {
        queue.expirePolled();
        Map<Integer, byte[]> lastPolled = queue.polledAboveHorizon();
        String cp = dir.resolve("cp" + checkpoints++).toString();
        db.checkpoint(cp);
        db.close();
        db = LetheDb.open(cp, DbOptions.builder().useWal(false).build());
        queue = queue(lastPolled);
    }

    /** The rows the engine shows for the queue, polled ones not yet removed included. */
    private int engineRows() throws Exception {
        queue.store().flush();
        int n = 0;
        ColumnFamilyHandle cf = db.columnFamily("timers");
        try (LetheIterator it = db.newIterator(cf)) {
            for (it.seekToFirst(); it.isValid(); it.next()) {
                n++;
            }
        }
        return n;
    }

    @Test
    void firedTimersLeaveByTheHorizonWithoutATombstone() throws Exception {
        for (int i = 0; i < 1000; i++) {
            queue.add(timer(i % 50, i));
        }
        for (int i = 0; i < 900; i++) {
            assertEquals(i, queue.poll().getTimestamp());
        }
        assertEquals(1000, engineRows(), "polled rows stay until the horizon moves");
        queue.expirePolled();
        assertEquals(100, engineRows(), "the horizon removed every fired timer");
        db.flush();
        assertTrue(db.property(db.columnFamily("timers"), "lethe.files").contains("tombstones=0"),
                db.property(db.columnFamily("timers"), "lethe.files"));
        assertEquals(100, queue.size());
        assertEquals(900, queue.peek().getTimestamp());
    }

    /** Flink's triggers remove the timer that just fired when they clear its window. */
    @Test
    void removingAFiredTimerWritesNoTombstone() throws Exception {
        for (int i = 0; i < 1000; i++) {
            queue.add(timer(i % 50, i));
        }
        for (int i = 0; i < 900; i++) {
            TimerHeapInternalTimer<Long, VoidNamespace> fired = queue.poll();
            assertEquals(i, fired.getTimestamp());
            queue.remove(fired);
            queue.remove(timer(1000 + i, i)); // never added, below what was polled
        }
        queue.remove(timer(950 % 50, 950)); // pending, beyond the cache: removed
        assertEquals(1, queue.store().tombstones(), "only the pending timer's remove writes one");
        queue.expirePolled();
        assertEquals(99, engineRows());
        assertEquals(99, queue.size());
        assertEquals(900, queue.peek().getTimestamp());
        for (int i = 900; i < 1000; i++) {
            if (i != 950) {
                assertEquals(i, queue.poll().getTimestamp());
            }
        }
        assertNull(queue.poll());
    }

    @Test
    void aTimerForAPassedTimeFiresOnceAndStaysGone() throws Exception {
        for (int i = 100; i < 200; i++) {
            queue.add(timer(i, i));
        }
        while (queue.peek().getTimestamp() <= 150) {
            queue.poll();
        }
        queue.expirePolled(); // the horizon is now at 151, the head
        TimerHeapInternalTimer<Long, VoidNamespace> late = timer(7, 120);
        TimerHeapInternalTimer<Long, VoidNamespace> again = timer(150, 150); // fired already, registered again
        assertTrue(queue.add(late));
        queue.add(again);
        queue.expirePolled();
        restoreFromCheckpoint();
        assertEquals(late, queue.poll(), "a timer registered below the horizon survives it");
        assertEquals(again, queue.poll());
        assertEquals(151, queue.peek().getTimestamp());
        restoreFromCheckpoint();
        assertEquals(151, queue.poll().getTimestamp(), "the late timers did not come back");
        assertEquals(48, queue.size());
    }

    @Test
    void timersPolledPartWayAtOneTimeStayPolledAcrossARestore() throws Exception {
        for (int key = 0; key < 30; key++) {
            queue.add(timer(key, 10));
            queue.add(timer(key, 20));
        }
        Set<TimerHeapInternalTimer<Long, VoidNamespace>> fired = new HashSet<>();
        for (int i = 0; i < 12; i++) {
            fired.add(queue.poll()); // an interrupted watermark step: some of the timers at 10
        }
        restoreFromCheckpoint();
        int rest = 0;
        while (queue.peek() != null && queue.peek().getTimestamp() == 10) {
            assertFalse(fired.contains(queue.poll()), "a fired timer came back");
            rest++;
        }
        assertEquals(18, rest);
        assertEquals(30, queue.size());
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 4, 5})
    void randomOperationsMatchAModel(int seed) throws Exception {
        counting = seed % 2 == 1; // odd seeds also count pending timers
        queue = queue(Map.of());
        Random rnd = new Random(seed);
        TreeSet<TimerHeapInternalTimer<Long, VoidNamespace>> model = new TreeSet<>(ORDER);
        long watermark = 0;
        for (int step = 0; step < 3000; step++) {
            int r = rnd.nextInt(100);
            if (r < 45) {
                TimerHeapInternalTimer<Long, VoidNamespace> e = timer(rnd.nextInt(30), watermark - 10 + rnd.nextInt(60));
                queue.add(e);
                model.add(e);
            } else if (r < 55) {
                TimerHeapInternalTimer<Long, VoidNamespace> e = model.isEmpty() || rnd.nextBoolean()
                        ? timer(rnd.nextInt(30), watermark - 10 + rnd.nextInt(60))
                        : new ArrayList<>(model).get(rnd.nextInt(model.size()));
                queue.remove(e);
                model.remove(e);
            } else if (r < 85) {
                watermark += rnd.nextInt(8);
                advance(rnd, model, watermark);
            } else if (r < 89) {
                queue.expirePolled();
            } else if (r < 92) {
                // The expiry driver's move, as from its own thread: to the published horizon.
                db.advanceHorizon(db.columnFamily("timers"), queue.store().publishedHorizon());
            } else if (r < 97) {
                reopen();
            } else {
                restoreFromCheckpoint();
            }
            if (model.isEmpty()) {
                assertNull(queue.peek(), "step " + step);
            } else {
                assertEquals(model.first().getTimestamp(), queue.peek().getTimestamp(), "step " + step);
            }
            assertEquals(counting ? model.size() : -1, queue.store().pendingTimers(), "step " + step);
            if (step % 100 == 0) {
                assertEquals(model.size(), queue.size(), "step " + step);
                assertEquals(new HashSet<>(model), contents(), "step " + step);
            }
        }
    }

    /**
     * Fires timers up to the watermark as Flink does (peek, poll, callback), sometimes stopping
     * part-way; a callback sometimes registers a timer for a time already passed.
     */
    private void advance(Random rnd, TreeSet<TimerHeapInternalTimer<Long, VoidNamespace>> model, long watermark) {
        int stopAfter = rnd.nextInt(4) == 0 ? rnd.nextInt(5) : Integer.MAX_VALUE;
        int polls = 0;
        while (queue.peek() != null && queue.peek().getTimestamp() <= watermark && polls < stopAfter) {
            TimerHeapInternalTimer<Long, VoidNamespace> e = queue.poll();
            assertEquals(model.first().getTimestamp(), e.getTimestamp());
            assertTrue(model.remove(e), "polled a timer the model does not hold: " + e);
            polls++;
            if (rnd.nextInt(10) == 0) {
                TimerHeapInternalTimer<Long, VoidNamespace> late = timer(rnd.nextInt(30), e.getTimestamp() - rnd.nextInt(5));
                queue.add(late);
                model.add(late);
            }
        }
        if (polls < stopAfter) {
            assertTrue(model.isEmpty() || model.first().getTimestamp() > watermark);
        }
    }

    private Set<TimerHeapInternalTimer<Long, VoidNamespace>> contents() throws Exception {
        Set<TimerHeapInternalTimer<Long, VoidNamespace>> all = new HashSet<>();
        try (CloseableIterator<TimerHeapInternalTimer<Long, VoidNamespace>> it = queue.iterator()) {
            while (it.hasNext()) {
                assertTrue(all.add(it.next()), "an element twice");
            }
        }
        return all;
    }

    @Test
    void aRemovedTimerRegisteredAgainBehavesAsOnTheHeap() throws Exception {
        List<TimerHeapInternalTimer<Long, VoidNamespace>> timers = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            timers.add(timer(i, 100 + i));
            queue.add(timers.get(i));
        }
        assertTrue(queue.remove(timers.get(0)), "the head was removed");
        assertFalse(queue.remove(timers.get(0)), "already gone");
        assertTrue(queue.add(timers.get(0)), "the head again");
        restoreFromCheckpoint();
        for (TimerHeapInternalTimer<Long, VoidNamespace> t : timers) {
            assertEquals(t, queue.poll());
        }
        assertNull(queue.poll());
    }

    @Test
    void aTimerAddedAgainWhilePendingIsNotWrittenAgain() throws Exception {
        for (int round = 0; round < 5; round++) {
            for (int i = 0; i < 30; i++) {
                queue.add(timer(i, 100 + i)); // as a window operator does for every element
            }
        }
        assertEquals(30, queue.store().writes());
        for (int i = 0; i < 30; i++) {
            assertEquals(100 + i, queue.poll().getTimestamp());
        }
        assertNull(queue.poll());
    }

    @Test
    void aTimerRemovedOrFiredAndAddedAgainIsWrittenAgain() throws Exception {
        for (int i = 0; i < 30; i++) {
            queue.add(timer(i, 100 + i));
        }
        TimerHeapInternalTimer<Long, VoidNamespace> last = timer(29, 129); // beyond its key group's cache
        queue.remove(last);
        assertFalse(contents().contains(last));
        queue.add(last);
        assertTrue(contents().contains(last), "removed, then added again: pending");
        for (int i = 0; i < 30; i++) {
            TimerHeapInternalTimer<Long, VoidNamespace> fired = queue.poll();
            assertEquals(100 + i, fired.getTimestamp());
            if (i == 20) {
                queue.add(timer(fired.getKey(), fired.getTimestamp())); // fired, then registered again
                assertEquals(fired, queue.poll());
            }
        }
        assertNull(queue.poll());
        restoreFromCheckpoint();
        assertNull(queue.poll(), "nothing came back");
    }
}
