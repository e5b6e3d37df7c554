package io.lethe.flink.expiry;

import io.lethe.engine.ColumnFamilyHandle;
import io.lethe.engine.LetheDb;
import io.lethe.engine.LetheException;

import org.apache.flink.runtime.state.ttl.TtlTimeProvider;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.LongUnaryOperator;

/**
 * Advances the engine horizons of one backend's expiring states (and of its timer queues kept in
 * the engine, to what their task thread published) on a timer, so that expired entries and fired
 * timers leave also while the input is idle. Each advance is a durable engine record (a manifest
 * sync), so it runs every {@link #period(Duration)}, not per access: a twentieth of the delete
 * persistence threshold, which leaves FADE (whose budgets use 90 % of it) the rest to remove what a
 * horizon hides from files that pages could not be dropped from whole.
 *
 * <p>One daemon thread serves every backend of the JVM. Thread-safe: states register from the
 * task thread, the timer advances from its own, {@link #close()} waits for an advance in flight,
 * so the engine is never used after the backend disposed it.
 */
public final class ExpiryDriver implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ExpiryDriver.class);
    static final long MIN_PERIOD_MS = 50;
    static final long MAX_PERIOD_MS = 10_000;

    private static final ScheduledExecutorService TIMER = newTimer();

    private final LetheDb db;
    private final TtlTimeProvider timeProvider;
    private final long periodMs;
    private final Map<String, Registered> states = new LinkedHashMap<>();
    private ScheduledFuture<?> task;
    private boolean closed;
    private long advances;

    private static final class Registered {
        final ColumnFamilyHandle columnFamily;
        /** The horizon due at a time of the TTL time provider (an unsigned delete key). */
        final LongUnaryOperator horizonAt;
        long horizon;

        Registered(ColumnFamilyHandle columnFamily, LongUnaryOperator horizonAt) {
            this.columnFamily = columnFamily;
            this.horizonAt = horizonAt;
        }
    }

    public ExpiryDriver(LetheDb db, TtlTimeProvider timeProvider, Duration deletePersistenceThreshold) {
        this.db = db;
        this.timeProvider = timeProvider;
        this.periodMs = period(deletePersistenceThreshold);
    }

    /** How often horizons move for a delete persistence threshold (0: FADE off). */
    static long period(Duration deletePersistenceThreshold) {
        long dth = deletePersistenceThreshold.toMillis();
        if (dth <= 0) {
            return MAX_PERIOD_MS;
        }
        return Math.max(MIN_PERIOD_MS, Math.min(MAX_PERIOD_MS, dth / 20));
    }

    public long periodMs() {
        return periodMs;
    }

    /** Starts (or keeps) advancing the horizon of an active state; replaces an earlier registration. */
    public void register(ColumnFamilyHandle columnFamily, StateExpiry expiry) {
        register(expiry.stateName(), columnFamily, expiry::horizon);
    }

    /**
     * Starts (or keeps) advancing a column family's horizon to what {@code horizon} says: a thread-safe
     * source that never names a horizon above a delete key still in use. Replaces an earlier
     * registration of the name.
     */
    public void register(String name, ColumnFamilyHandle columnFamily, LongSupplier horizon) {
        register(name, columnFamily, now -> horizon.getAsLong());
    }

    private synchronized void register(String name, ColumnFamilyHandle columnFamily, LongUnaryOperator horizonAt) {
        if (closed) {
            throw new IllegalStateException("The backend was disposed");
        }
        states.put(name, new Registered(columnFamily, horizonAt));
        if (task == null) {
            task = TIMER.scheduleWithFixedDelay(this::advanceQuietly, periodMs, periodMs, TimeUnit.MILLISECONDS);
        }
    }

    /** Stops advancing a state's horizon (its TTL was turned off). */
    public synchronized void unregister(String stateName) {
        states.remove(stateName);
    }

    /**
     * Advances every registered horizon to the TTL time provider's now. Called by the timer, and by
     * tests that control time.
     *
     * @return how many horizons moved
     */
    public synchronized int advance() throws LetheException {
        if (closed) {
            return 0;
        }
        long now = timeProvider.currentTimestamp();
        int moved = 0;
        for (Registered r : states.values()) {
            long h = r.horizonAt.applyAsLong(now);
            if (Long.compareUnsigned(h, r.horizon) > 0) {
                db.advanceHorizon(r.columnFamily, h);
                r.horizon = h;
                moved++;
            }
        }
        advances += moved;
        return moved;
    }

    /** Horizon moves so far, over all states. */
    public synchronized long advances() {
        return advances;
    }

    private void advanceQuietly() {
        try {
            advance();
        } catch (LetheException | RuntimeException e) {
            // The next period tries again; the state stays correct (expiry only waits).
            LOG.warn("Could not advance the expiry horizon of a Lethe state", e);
        }
    }

    /** Stops the timer; waits for an advance in flight. */
    @Override
    public synchronized void close() {
        closed = true;
        if (task != null) {
            task.cancel(false);
            task = null;
        }
        states.clear();
    }

    private static ScheduledExecutorService newTimer() {
        ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "lethe-expiry");
            t.setDaemon(true);
            return t;
        });
        timer.setRemoveOnCancelPolicy(true);
        return timer;
    }
}
