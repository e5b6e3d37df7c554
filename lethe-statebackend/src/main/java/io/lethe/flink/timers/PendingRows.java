package io.lethe.flink.timers;

import io.lethe.engine.LetheDb;
import io.lethe.engine.LetheException;
import io.lethe.engine.LetheIterator;
import io.lethe.engine.ReadOptions;

/**
 * A cursor over one key group's pending timer rows in order, from a start row on. Rows polled
 * already (at or below the group's last polled row L) that the horizon has not removed yet are
 * skipped, unless they are sticky (see {@link TimerStore}): a sticky row at or below L was added
 * again after its poll and is pending.
 *
 * <p>Reads a consistent view of the engine taken when it opens (buffered writes are flushed first).
 * Not thread-safe; close it.
 */
final class PendingRows implements AutoCloseable {
    private final LetheIterator it;
    private final byte[] lastPolled;

    PendingRows(TimerStore store, byte[] lowerBound, byte[] upperBound, byte[] from, byte[] lastPolled)
            throws LetheException {
        store.flush();
        this.lastPolled = lastPolled;
        this.it = store.db().newIterator(ReadOptions.bounded(lowerBound, upperBound), store.columnFamily());
        try {
            it.seek(from);
            skipPolled();
        } catch (LetheException | RuntimeException e) {
            it.close();
            throw e;
        }
    }

    boolean isValid() {
        return it.isValid();
    }

    byte[] row() {
        return it.key();
    }

    /** Whether the current row is sticky: it leaves only by a tombstone. */
    boolean sticky() {
        return it.deleteKey() == LetheDb.MAX_DELETE_KEY;
    }

    void next() throws LetheException {
        it.next();
        skipPolled();
    }

    private void skipPolled() throws LetheException {
        while (it.isValid() && !sticky() && lastPolled != null && it.compareKeyTo(lastPolled) <= 0) {
            it.next();
        }
    }

    @Override
    public void close() {
        it.close();
    }
}
