package io.lethe.flink.timers;

import io.lethe.engine.ColumnFamilyHandle;
import io.lethe.engine.LetheDb;
import io.lethe.engine.LetheException;
import io.lethe.engine.WriteBatch;
import io.lethe.engine.WriteOptions;

import org.apache.flink.util.FlinkRuntimeException;

import java.util.Arrays;

/**
 * One timer queue's rows in the engine: its column family, the writes not yet handed to the engine,
 * and the queue's horizon.
 *
 * <p>A row is {@code key-group prefix | element bytes} with an empty value; a timer's element bytes
 * start with its timestamp, sign bit flipped, big-endian (Flink's {@code TimerSerializer}), so the
 * engine orders rows by key group, then time. A row's delete key is those 8 bytes (time order as an
 * unsigned number), so that fired timers leave by the column family's horizon H, without a
 * tombstone each. The rule that keeps this sound, with L(g) the largest row key group g has polled:
 *
 * <ul>
 *   <li>A row added with a time below S, or at or below L(g), is written <em>sticky</em>: with the
 *       maximum delete key, which no horizon removes; its poll writes a tombstone. Flink fires a
 *       timer registered for a time already passed at its next advance, so it must not vanish.
 *   <li>Every other row is added with its time (at least H) and above L(g). A key group polls its
 *       smallest row, so every non-sticky row at or below L(g) has been polled: reads of the
 *       column family skip them until the horizon removes them.
 *   <li>H moves only up to the time of the queue's head (its smallest pending row), or past the last
 *       polled time when the queue is empty: below that every row was polled. The task thread moves
 *       it before snapshots; between them it publishes such a horizon after each poll, raising S
 *       to it first, and the backend's expiry driver moves H there from its own thread.
 *   <li>S is H, or higher after a restore that merged queues of different horizons (the lowest
 *       becomes H, the highest S): a pending row below S may have been written sticky, and a row
 *       written again must never get a smaller delete key than before, or the horizon would remove
 *       the newer version and bring back the older.
 * </ul>
 *
 * <p>Queues whose elements do not start with such a timestamp ({@code timeOrdered} false) write
 * every row sticky: each poll and remove is then a tombstone, as in RocksDB.
 *
 * <p>Not thread-safe: the task thread owns it; only {@link #publishedHorizon()} and the counters
 * are read from other threads (the expiry driver, metric reporters).
 */
public final class TimerStore {
    /** Writes buffered before they go to the engine in one batch. */
    static final int BATCH_OPERATIONS = 500;

    private final LetheDb db;
    private final ColumnFamilyHandle cf;
    private final int keyGroupPrefixBytes;
    private final boolean timeOrdered;
    private final WriteBatch batch = new WriteBatch();
    private final RecentRows recent = new RecentRows(RecentRows.SLOTS);
    private int pending;
    /** H as this queue last moved it (the expiry driver may have moved it further). */
    private volatile long horizon;
    /** S: rows added below it are sticky. */
    private long stickyBelow;
    /** A horizon another thread may move H to (at most S; see {@link #publishHorizon}). */
    private volatile long published;
    /** The largest time polled, as an unsigned delete key (0: none). */
    private long lastPolledTime;
    // Counters for metrics: written by the task thread only, read by reporters.
    private volatile long polls;
    private volatile long writes;
    private volatile long tombstones;
    private volatile long reads;
    private volatile long rowsRead;
    /** Pending timers, once counting started; -1 before. */
    private volatile long pendingTimers = -1;

    public TimerStore(LetheDb db, ColumnFamilyHandle cf, int keyGroupPrefixBytes, boolean timeOrdered)
            throws LetheException {
        this.db = db;
        this.cf = cf;
        this.keyGroupPrefixBytes = keyGroupPrefixBytes;
        this.timeOrdered = timeOrdered;
        this.horizon = db.horizon(cf);
        this.stickyBelow = horizon;
    }

    /** Raises S (after a restore that merged queues: to the highest horizon among them). */
    public void raiseStickyBelow(long s) {
        if (Long.compareUnsigned(s, stickyBelow) > 0) {
            stickyBelow = s;
        }
    }

    /** S, for the snapshot's metadata. */
    public long stickyBelow() {
        return stickyBelow;
    }

    public LetheDb db() {
        return db;
    }

    public ColumnFamilyHandle columnFamily() {
        return cf;
    }

    int keyGroupPrefixBytes() {
        return keyGroupPrefixBytes;
    }

    /** H (an unsigned delete key). */
    public long horizon() {
        return horizon;
    }

    boolean timeOrdered() {
        return timeOrdered;
    }

    /**
     * The delete key for a row added to a key group that has polled up to {@code lastPolled} (null:
     * nothing): its time, or sticky.
     */
    long deleteKeyForAdd(byte[] row, byte[] lastPolled) {
        if (!timeOrdered || Long.compareUnsigned(timeOf(row), stickyBelow) < 0
                || (lastPolled != null && Arrays.compareUnsigned(row, lastPolled) <= 0)) {
            return LetheDb.MAX_DELETE_KEY;
        }
        return timeOf(row);
    }

    /** The row's time: the 8 bytes after the key-group prefix, big-endian. */
    long timeOf(byte[] row) {
        long t = 0;
        for (int i = 0; i < 8; i++) {
            t = (t << 8) | (row[keyGroupPrefixBytes + i] & 0xFF);
        }
        return t;
    }

    /** Writes a row; {@code row} is kept, the caller must not change it. */
    void put(byte[] row, long deleteKey) {
        batch.put(cf, row, EMPTY, deleteKey);
        recent.add(row);
        writes++;
        written();
    }

    /**
     * Whether the row was written lately and is pending since (neither polled nor removed): then
     * writing it again would change nothing. False says nothing.
     */
    boolean recentlyWritten(byte[] row) {
        return recent.contains(row);
    }

    /** A tombstone for a row whose delete key is not known: the maximum, as every version allows. */
    void delete(byte[] row) {
        recent.forget(row);
        batch.delete(cf, row);
        tombstones++;
        written();
    }

    /** Records one sequential read of a key group's rows (a cache refill or an iteration). */
    void recordRead(int rows) {
        reads++;
        rowsRead += rows;
    }

    /** Starts counting pending timers from {@code pending}, the number pending now. */
    void startCounting(long pending) {
        pendingTimers = pending;
    }

    boolean counting() {
        return pendingTimers >= 0;
    }

    /** Adds {@code delta} to the pending timers, if they are counted. */
    void countPending(int delta) {
        if (pendingTimers >= 0) {
            pendingTimers += delta;
        }
    }

    /** Pending timers; -1 when they are not counted. */
    public long pendingTimers() {
        return pendingTimers;
    }

    /** Timers polled. */
    public long polls() {
        return polls;
    }

    /** Rows written: timers added (a timer added again while pending is mostly not written again). */
    public long writes() {
        return writes;
    }

    /** Tombstones written: removed timers, and polled ones a horizon cannot remove. */
    public long tombstones() {
        return tombstones;
    }

    /** Sequential reads of the engine (cache refills and iterations), and the rows they read. */
    public long reads() {
        return reads;
    }

    public long rowsRead() {
        return rowsRead;
    }

    /** Records that a row was polled: a sticky row gets its tombstone; the others wait for H. */
    void polled(byte[] row, boolean sticky) {
        polls++;
        recent.forget(row);
        if (sticky) {
            delete(row);
        } else if (Long.compareUnsigned(timeOf(row), lastPolledTime) > 0) {
            lastPolledTime = timeOf(row);
        }
    }

    /** Hands the buffered writes to the engine: before any read of the column family, and snapshots. */
    public void flush() {
        if (pending == 0) {
            return;
        }
        try {
            db.write(WriteOptions.DEFAULT, batch);
        } catch (LetheException e) {
            throw new FlinkRuntimeException("Failed to write timers to Lethe", e);
        }
        batch.clear();
        pending = 0;
    }

    /**
     * Flushes, then moves H up to {@code headTime}, the time of the queue's smallest pending row
     * (null if the queue is empty: just past the last polled time). Polled rows below it leave the
     * engine by page drops and compaction.
     */
    public void expirePolled(Long headTime) throws LetheException {
        flush();
        if (!timeOrdered) {
            return;
        }
        long target = publishHorizon(headTime);
        if (Long.compareUnsigned(target, horizon) > 0) {
            db.advanceHorizon(cf, target);
            horizon = target;
        }
    }

    /**
     * Publishes the horizon the queue allows now, {@code headTime} being the time of its smallest
     * pending row (null: empty), for {@link #publishedHorizon()}; raises S to it first, so that no
     * row added from now on below it is written non-sticky. Returns it.
     */
    public long publishHorizon(Long headTime) {
        if (!timeOrdered) {
            return 0;
        }
        long target = headTime != null ? headTime
                : lastPolledTime == LetheDb.MAX_DELETE_KEY ? lastPolledTime : lastPolledTime + 1;
        raiseStickyBelow(target);
        if (Long.compareUnsigned(target, published) > 0) {
            published = target;
        }
        return target;
    }

    /** The last published horizon: safe to move H to from any thread (buffered rows lie above it). */
    public long publishedHorizon() {
        return published;
    }

    private void written() {
        if (++pending >= BATCH_OPERATIONS) {
            flush();
        }
    }

    private static final byte[] EMPTY = new byte[0];
}
