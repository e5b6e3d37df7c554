package io.lethe.flink.expiry;

import io.lethe.engine.LetheDb;

import org.apache.flink.api.common.state.StateTtlConfig;
import org.apache.flink.api.common.typeutils.TypeSerializer;

import java.util.Collection;

/**
 * The contents state of a window operator: every entry, clears included, carries its window's max
 * timestamp as delete key, and the horizon follows the operator's timers ({@link WindowExpiry}).
 * The operator's TTL configuration plays no part.
 */
final class WindowContentsExpiry extends StateExpiry {
    private final WindowExpiry window;
    /** The horizon of the restored engine (0 if none). */
    private long restoredHorizon;

    WindowContentsExpiry(String stateName, WindowExpiry window, long floor) {
        super(stateName, floor);
        this.window = window;
    }

    @Override
    public boolean applyTtlConfig(StateTtlConfig ttl, long horizonPeriodMs) {
        return isActive();
    }

    @Override
    public boolean isActive() {
        return !isAtMaxFloor() && window.isActive();
    }

    /** Checks on the operator's timers may turn expiry off at any time: computed on each call. */
    @Override
    public String status() {
        if (isAtMaxFloor()) {
            return "off: restored from a checkpoint written before delete keys (format 1)";
        }
        String off = window.offReason();
        if (off != null) {
            return "off: " + off;
        }
        long lateness = window.cleanupOffset();
        WindowExpiry.Domain domain = window.domain();
        return "active: window contents leave after their cleanup, followed on the operator's "
                + (domain == WindowExpiry.Domain.PROCESSING ? "processing-time " : domain == null ? "" : "event-time ")
                + "timers" + (lateness == Long.MIN_VALUE ? "" : " (allowed lateness " + lateness + " ms)");
    }

    @Override
    public long issuePut(byte[] key, byte[] value) {
        return issueWindowWrite(key);
    }

    @Override
    public long issueListElements(byte[] key, Collection<?> elements) {
        return issueWindowWrite(key);
    }

    @Override
    public long earlierDataDeleteKey(byte[] key) {
        return deleteKeyOfWindow(WindowExpiry.maxTimestampOfKey(key));
    }

    @Override
    public long issueDelete(byte[] key) {
        long maxTs = WindowExpiry.maxTimestampOfKey(key);
        window.cleared(maxTs);
        return deleteKeyOfWindow(maxTs);
    }

    /** Nothing is known of how the savepoint's windows were cleaned up: they stay. */
    @Override
    public long issueRestored(byte[] key, byte[] value, TypeSerializer<?> stateSerializer) {
        window.restoredFromSavepoint(WindowExpiry.maxTimestampOfKey(key));
        return LetheDb.MAX_DELETE_KEY;
    }

    @Override
    public long issueRewrite(byte[] key, byte[] value, long now) {
        return earlierDataDeleteKey(key);
    }

    @Override
    public long horizon(long now) {
        return isActive() ? window.horizon() : 0;
    }

    @Override
    public void restoreHorizon(long horizon) {
        this.restoredHorizon = horizon;
    }

    /** A write of window contents: the key is read once, for the checks and the delete key. */
    private long issueWindowWrite(byte[] key) {
        long maxTs = WindowExpiry.maxTimestampOfKey(key);
        window.wrote(maxTs);
        return deleteKeyOfWindow(maxTs);
    }

    /**
     * A window's max timestamp, raised to the horizon the engine may have: after a restore the
     * operator forgets its watermark until the next one arrives and may write to windows it had
     * cleaned up before (Flink fires them again as late firings). Those writes must stay visible
     * until the window is cleaned up again, which the horizon passes only later. In normal
     * operation a window written is never below the horizon, and this is its max timestamp.
     */
    private long deleteKeyOfWindow(long maxTimestamp) {
        if (isAtMaxFloor() || window.belowFloor(maxTimestamp)) {
            return LetheDb.MAX_DELETE_KEY;
        }
        return Math.max(Math.max(0, maxTimestamp), Math.max(restoredHorizon, window.horizonUpperBound()));
    }
}
