package io.lethe.flink.expiry;

import org.apache.flink.configuration.StateChangelogOptions;
import org.apache.flink.runtime.execution.Environment;
import org.apache.flink.streaming.api.operators.InternalTimer;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Iterator;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * Expiry of a {@code WindowOperator}'s window contents through the engine horizon (see
 * docs/flink-backend.md), learned and checked from what the operator does, since the backend never sees
 * the operator itself (Flink removes it from the task configuration before state is initialized).
 *
 * <p><b>Delete key.</b> Every entry (and clear) of the operator's {@code window-contents} state
 * carries its window's max timestamp, read from the key (a {@code TimeWindow} namespace ends it).
 *
 * <p><b>What is observed.</b> The operator's timers ({@code window-timers}) in the time domain of
 * its windows, event or processing time (that of the first timer seen): every timer added,
 * removed, polled, and every peek. For each window it writes, {@code WindowOperator} registers a
 * cleanup timer at {@code maxTimestamp + allowedLateness} (processing time: at the max timestamp),
 * after the trigger's own timers; Flink's triggers register at or before the max timestamp. So
 * the cleanup offset L is the largest offset {@code timestamp - maxTimestamp} of any timer added.
 *
 * <p><b>What is checked</b> (any violation turns expiry off for good, before the horizon can
 * cover the window concerned):
 * <ol>
 *   <li>every write of window contents outside a timer callback is followed, within the same
 *       element, by a timer added for that key and window at offset L (its cleanup timer: with an
 *       unbounded lateness there is none, and then no window may ever expire);
 *   <li>every callback of a timer at offset L clears that key's window contents (the cleanup);
 *   <li>no timer at offset L is removed except inside its own window's cleanup (a trigger deleting
 *       the cleanup timer would leave the window readable later);
 *   <li>no merging-window-set state (session windows), and timers in one time domain only (a
 *       processing-time trigger on event-time windows, or the reverse, is not followed).
 * </ol>
 *
 * <p><b>Horizon.</b> The timer service polls a timer before its callback runs and peeks at the
 * queue before the next: a peek showing no timer at or below the last polled timestamp t means
 * every timer up to t has fired and returned (in processing time, where registering a timer peeks
 * too, the next poll of a later timer says so). Every window with {@code maxTimestamp + L <= t}
 * has then been cleared by its cleanup callback (checks 1-3), and the operator never writes it
 * again while its watermark (its clock) is past the cleanup time. The horizon is {@code t - L +
 * 1}. After a restore
 * the operator forgets its watermark until the next one arrives and may write such windows again
 * (Flink fires them late), as a processing-time operator may after its clock stepped back: those
 * writes carry at least the current horizon as delete key
 * ({@link StateExpiry}), so they stay until cleaned up again.
 *
 * <p><b>Across restores.</b> A restored operator continues what was observed before only if it
 * was observed: native checkpoints carry whether expiry was active and the cleanup offset; once
 * off, it stays off for the job (windows fired while off were never checked). A canonical
 * savepoint carries nothing of it: its windows are restored with the maximum delete key, and so
 * are later writes to windows up to the latest restored one (the <em>window floor</em>); windows
 * after it are all observed from their first write, so expiry starts afresh for them.
 *
 * <p>Thread-safety: everything runs on the task thread except {@link #horizon()} and {@link
 * #offReason()}, which the expiry driver and metric reporters read.
 */
public final class WindowExpiry {
    private static final Logger LOG = LoggerFactory.getLogger(WindowExpiry.class);
    /** The state of the window contents in Flink's {@code WindowOperator}. */
    public static final String CONTENTS_STATE = "window-contents";
    /** The state that marks merging (session) windows. */
    public static final String MERGING_STATE = "merging-window-set";
    /** The timer queues of Flink's {@code WindowOperator}. */
    public static final String EVENT_TIMER_QUEUE = "_timer_state/event_window-timers";
    public static final String PROCESSING_TIMER_QUEUE = "_timer_state/processing_window-timers";

    /** The timer queue a timer comes from. */
    public enum Domain { EVENT, PROCESSING }

    private final boolean windowOperator;
    /** The time domain of the operator's windows: that of the first timer seen. */
    private volatile Domain domain;
    private volatile String offReason;
    private Supplier<Object> currentKey = () -> null;
    /** Windows up to this max timestamp were restored from a canonical savepoint: never expired. */
    private long windowFloor = Long.MIN_VALUE;

    /** The cleanup offset L: the largest timestamp - maxTimestamp of any timer added. */
    private volatile long cleanupOffset = Long.MIN_VALUE;
    private long lastPolled = Long.MIN_VALUE;
    /** Every timer up to this one has fired and returned. Read by the driver thread. */
    private volatile long completed = Long.MIN_VALUE;

    // Check 1: the last write outside a callback, until its element ends.
    private Object pendingWriteKey;
    private long pendingWriteMaxTs;
    private long pendingWriteBestOffset;
    private boolean pendingWrite;
    // Checks 2 and 3: the callback running (between a poll and the next peek or poll).
    private boolean inCallback;
    private Object callbackKey;
    private long callbackMaxTs;
    private boolean callbackIsCleanup;
    private boolean callbackCleared;

    /** Why the windows of another window operator take the ordinary path (null for others). */
    private final String otherWindows;

    private WindowExpiry(boolean windowOperator, String offReason, String otherWindows) {
        this.windowOperator = windowOperator;
        this.offReason = offReason;
        this.otherWindows = otherWindows;
    }

    /** For backends not built for a window operator (tests, other operators). */
    public static WindowExpiry none() {
        return new WindowExpiry(false, "not a window operator", null);
    }

    /**
     * For the operator this backend serves: its identifier is {@code
     * <OperatorClass>_<operatorId>_(<subtask>/<parallelism>)}.
     */
    public static WindowExpiry detect(Environment env, String operatorIdentifier, boolean enabled) {
        if (!operatorIdentifier.startsWith("WindowOperator_")
                && !operatorIdentifier.startsWith("EvictingWindowOperator_")) {
            String other = otherWindowsReason(operatorIdentifier);
            return other == null ? none() : new WindowExpiry(false, "not the synchronous window operator", other);
        }
        String off = null;
        if (!enabled) {
            off = "turned off by state.backend.lethe.window-expiry";
        } else if (env.getJobConfiguration().get(StateChangelogOptions.ENABLE_STATE_CHANGE_LOG)) {
            off = "the changelog state backend wraps this backend (it would not log page drops)";
        }
        return new WindowExpiry(true, off, null);
    }

    /**
     * Why the windows of a window operator other than {@code WindowOperator} are not followed by the
     * horizon, for the gauges of its states; null for operators without windows.
     */
    static String otherWindowsReason(String operatorIdentifier) {
        if (operatorIdentifier.startsWith("AsyncWindowOperator_")
                || operatorIdentifier.startsWith("AsyncEvictingWindowOperator_")) {
            return "windows of Flink's asynchronous window operator are not followed by the horizon (its callbacks"
                    + " read the window of an element's last assignment, so the cleanup checks made on the synchronous"
                    + " operator cannot hold); cleared windows leave through tombstones within D_th";
        }
        for (String sql : new String[] {"WindowAggOperator_", "AsyncStateWindowAggOperator_",
                "AggregateWindowOperator_", "TableAggregateWindowOperator_"}) {
            if (operatorIdentifier.startsWith(sql)) {
                return "windows and slices of SQL window operators are not followed by the horizon (their cleanup"
                        + " contract is not checked); cleared state leaves through tombstones within D_th";
            }
        }
        return null;
    }

    /** Why this operator's windows take the ordinary path: null unless another window operator. */
    public String otherWindowsReason() {
        return otherWindows;
    }

    /** The operator's current key (the backend's), for matching writes and clears with timers. */
    public void setCurrentKey(Supplier<Object> currentKey) {
        this.currentKey = currentKey;
    }

    /** Whether this backend serves a window operator (its contents carry window delete keys). */
    public boolean isWindowOperator() {
        return windowOperator;
    }

    /** Whether the horizon may follow the operator's timers. */
    public boolean isActive() {
        return windowOperator && offReason == null;
    }

    /** The time domain of the windows (null before the first timer). */
    public Domain domain() {
        return domain;
    }

    /** Why not (null while active). */
    public String offReason() {
        return offReason;
    }

    /** The cleanup offset learned so far (the allowed lateness; Long.MIN_VALUE before any timer). */
    public long cleanupOffset() {
        return cleanupOffset;
    }

    /** Turns expiry off for good (the horizon stays where it is: everything below was verified). */
    public void disable(String reason) {
        if (offReason == null && windowOperator) {
            offReason = reason;
            LOG.info("Lethe window expiry is off from here on: {}", reason);
        }
    }

    // ---- Across restores (task thread, while the backend is built and checkpointed).

    /** What a native checkpoint records: active, the cleanup offset, the window floor. */
    public record Record(boolean active, long cleanupOffset, long windowFloor) {}

    /** The record of this backend for a checkpoint. */
    public Record record() {
        return new Record(isActive(), cleanupOffset, windowFloor);
    }

    /**
     * Continues from the records of the restored native checkpoints (several when rescaling);
     * null: a checkpoint without one (format 1).
     */
    public void restore(Record r) {
        if (!windowOperator) {
            return;
        }
        if (r == null) {
            disable("restored from a checkpoint written before window expiry (format 1)");
            return;
        }
        if (!r.active()) {
            disable("off in the checkpoint restored (windows fired while off were not checked)");
        }
        if (r.cleanupOffset() != Long.MIN_VALUE && cleanupOffset != Long.MIN_VALUE
                && r.cleanupOffset() != cleanupOffset) {
            disable("the restored subtasks observed different cleanup offsets");
        }
        cleanupOffset = Math.max(cleanupOffset, r.cleanupOffset());
        windowFloor = Math.max(windowFloor, r.windowFloor());
    }

    /** A window restored from a canonical savepoint: it and every window before it stay. */
    public void restoredFromSavepoint(long maxTimestamp) {
        windowFloor = Math.max(windowFloor, maxTimestamp);
    }

    /** Whether a window's contents carry the maximum delete key (restored from a savepoint). */
    public boolean belowFloor(long maxTimestamp) {
        return maxTimestamp <= windowFloor;
    }

    /** A state was registered: merging windows keep contents under windows other than the timers'. */
    public void registered(String stateName) {
        if (MERGING_STATE.equals(stateName)) {
            disable("merging (session) windows");
        }
    }

    /** Learns the time domain and cleanup offset from the timers a restored queue already holds. */
    public void restoredTimers(Iterator<?> timers, Domain d) {
        while (timers.hasNext()) {
            InternalTimer<?, ?> t = windowTimer(timers.next(), d);
            if (t != null) {
                learn(offset(t));
            }
        }
    }

    // ---- Observed on window contents (task thread).

    /** A write of window contents for the current key and the window ending at maxTimestamp + 1. */
    void wrote(long maxTimestamp) {
        if (!isActive() || inCallback) {
            return;  // writes inside callbacks go to the window firing, whose cleanup timer exists
        }
        Object key = currentKey.get();
        if (pendingWrite && pendingWriteMaxTs == maxTimestamp && Objects.equals(pendingWriteKey, key)) {
            return;  // the same element writes its window again (an evictor): one cleanup timer
        }
        checkPendingWrite();
        pendingWrite = true;
        pendingWriteKey = key;
        pendingWriteMaxTs = maxTimestamp;
        pendingWriteBestOffset = Long.MIN_VALUE;
    }

    /** A clear of the current key's window contents for the window ending at maxTimestamp + 1. */
    void cleared(long maxTimestamp) {
        if (inCallback && callbackMaxTs == maxTimestamp && Objects.equals(callbackKey, currentKey.get())) {
            callbackCleared = true;
        }
    }

    // ---- Observed on the timer queues (task thread).

    /**
     * The timer of a window in the operator's time domain while active; null otherwise (a timer of
     * no window, or timers in both domains, turn expiry off).
     */
    private InternalTimer<?, ?> windowTimer(Object timer, Domain d) {
        if (!isActive() || !(timer instanceof InternalTimer)) {
            return null;
        }
        if (domain == null) {
            domain = d;
        } else if (domain != d) {
            disable("timers in both event time and processing time (a trigger of the other time domain)");
            return null;
        }
        InternalTimer<?, ?> t = (InternalTimer<?, ?>) timer;
        if (!(t.getNamespace() instanceof TimeWindow)) {
            disable("timers with a namespace other than TimeWindow");
            return null;
        }
        return t;
    }

    void added(Object timer, Domain d) {
        InternalTimer<?, ?> t = windowTimer(timer, d);
        if (t == null) {
            return;
        }
        long offset = offset(t);
        learn(offset);
        if (pendingWrite && ((TimeWindow) t.getNamespace()).maxTimestamp() == pendingWriteMaxTs
                && Objects.equals(t.getKey(), pendingWriteKey)) {
            pendingWriteBestOffset = Math.max(pendingWriteBestOffset, offset);
        }
    }

    void removed(Object timer, Domain d) {
        InternalTimer<?, ?> t = windowTimer(timer, d);
        if (t == null || offset(t) != cleanupOffset) {
            return;
        }
        long maxTs = ((TimeWindow) t.getNamespace()).maxTimestamp();
        boolean ownCleanup = inCallback && callbackIsCleanup && callbackMaxTs == maxTs
                && Objects.equals(callbackKey, t.getKey());
        if (!ownCleanup) {
            disable("a window's cleanup timer was deleted before its cleanup (a trigger may read the window"
                    + " later)");
        }
    }

    void polled(Object timer, Domain d) {
        endCallback();
        checkPendingWrite();
        InternalTimer<?, ?> t = windowTimer(timer, d);
        if (t == null) {
            return;
        }
        if (d == Domain.PROCESSING && lastPolled != Long.MIN_VALUE && t.getTimestamp() > lastPolled
                && lastPolled > completed) {
            // Processing time: a later timer polled means every callback up to the last one returned
            // (peeks of this queue also happen inside callbacks, when a trigger registers a timer).
            completed = lastPolled;
        }
        lastPolled = Math.max(lastPolled, t.getTimestamp());
        inCallback = true;
        callbackKey = t.getKey();
        callbackMaxTs = ((TimeWindow) t.getNamespace()).maxTimestamp();
        callbackIsCleanup = offset(t) == cleanupOffset;
        callbackCleared = false;
    }

    /**
     * The event-time timer service looks at the head (null: empty) before the next timer; nothing
     * else peeks at the event-time queue. (Processing-time peeks are ignored: registering a
     * processing-time timer peeks too, also inside callbacks.)
     */
    void peeked(Object head, Domain d) {
        if (d != Domain.EVENT || domain != Domain.EVENT) {
            return;
        }
        endCallback();
        checkPendingWrite();
        if (!isActive() || lastPolled == Long.MIN_VALUE || lastPolled <= completed) {
            return;
        }
        if (head == null || (head instanceof InternalTimer && ((InternalTimer<?, ?>) head).getTimestamp() > lastPolled)) {
            completed = lastPolled;
        }
    }

    private void endCallback() {
        if (inCallback && callbackIsCleanup && !callbackCleared) {
            disable("a timer at the cleanup offset (" + cleanupOffset + " ms) did not clear its window: the"
                    + " allowed lateness may be unbounded");
        }
        inCallback = false;
    }

    private void checkPendingWrite() {
        if (pendingWrite && (pendingWriteBestOffset == Long.MIN_VALUE || pendingWriteBestOffset != cleanupOffset)) {
            disable("a window was written without a cleanup timer at the cleanup offset: the allowed lateness"
                    + " may be unbounded");
        }
        pendingWrite = false;
    }

    /**
     * Before any horizon, the largest offset seen is the cleanup offset (the first element's
     * trigger timer comes before its cleanup timer). Growing after that, the offset was not the
     * cleanup offset: off, with the offset kept (the horizon never goes back).
     */
    private void learn(long offset) {
        if (offset > cleanupOffset) {
            if (completed != Long.MIN_VALUE) {
                disable("a timer beyond the cleanup offset (" + cleanupOffset + " ms): a trigger registers timers"
                        + " after the window's cleanup");
                return;
            }
            cleanupOffset = offset;
        }
    }

    private static long offset(InternalTimer<?, ?> t) {
        return t.getTimestamp() - ((TimeWindow) t.getNamespace()).maxTimestamp();
    }

    /** The engine horizon: every window with {@code maxTimestamp < horizon} is dead (0: none yet). */
    public long horizon() {
        return isActive() ? candidate() : 0;
    }

    /**
     * At least every horizon handed out so far, also after expiry was turned off (the timers
     * observed and the offset freeze then): window writes carry at least this delete key.
     */
    public long horizonUpperBound() {
        return candidate();
    }

    private long candidate() {
        long t = completed;
        long l = cleanupOffset;
        if (t == Long.MIN_VALUE || l < 0 || l > t) {
            return 0;
        }
        long h = t - l;  // no overflow: 0 <= l <= t
        return h == Long.MAX_VALUE ? h : h + 1;
    }

    /**
     * The max timestamp of the window in a window-contents key (may be negative): the key ends with
     * its {@code TimeWindow} namespace, whose last 8 bytes are the window's end.
     */
    static long maxTimestampOfKey(byte[] key) {
        if (key.length < Long.BYTES) {
            throw new IllegalArgumentException("A window-contents key of " + key.length + " bytes has no window");
        }
        long end = Timestamps.read(key, key.length - Long.BYTES);
        return end == Long.MIN_VALUE ? end : end - 1;
    }
}
