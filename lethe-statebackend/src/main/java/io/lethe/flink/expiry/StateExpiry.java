package io.lethe.flink.expiry;

import io.lethe.engine.LetheDb;

import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.api.common.state.StateTtlConfig;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.base.ListSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.runtime.state.ListDelimitedSerializer;
import org.apache.flink.runtime.state.ttl.TtlAwareSerializer;
import org.apache.flink.runtime.state.ttl.TtlValue;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;

import java.io.IOException;
import java.util.Collection;

/**
 * The delete keys one state writes and the horizon that expires its entries in the engine.
 *
 * <p><b>Delete keys of TTL state.</b> A state whose serializer is Flink's TTL serializer stores an
 * 8-byte big-endian last-access timestamp before every user value (at offset 0 of a value,
 * reducing or aggregating entry and of each list element, at offset 1 of a map entry, after its
 * null flag). Its delete key is that timestamp, not the expiration time: it needs no TTL duration,
 * so restores (which see serializers, not descriptors) write the same delete keys as the running
 * job, and a TTL changed across a restore just moves the horizon. The horizon is {@code now - ttl +
 * 1}, which removes exactly the entries Flink considers expired ({@code ts + ttl <= now}).
 *
 * <p><b>Monotone.</b> The engine requires that a newer version of a key never has a smaller delete
 * key than an older one. Timestamps come from the TTL time provider, a wall clock that may step
 * back, so every delete key is raised to the largest one this state issued before (its
 * <em>floor</em>), which checkpoints carry along. Raising only delays physical removal; Flink
 * still filters expired values when reading. List appends are rounded up to a grain so that the
 * operands of a burst share one delete key and fold into one entry on disk.
 *
 * <p><b>Window contents</b> of a window operator carry their window's max timestamp instead (see
 * {@link WindowExpiry}), clears included, and follow the operator's timers.
 *
 * <p><b>Clears.</b> A point delete carries a delete key too, at least that of every version it
 * deletes (the floor, or the window's): once the horizon passes it, the tombstone leaves with the
 * data, and a clear whose data never left the memtable writes nothing to disk.
 *
 * <p>Any other state writes the maximum delete key (never removed by a horizon).
 *
 * <p>Not thread-safe: used by the task thread (writes, checkpoint preparation), except {@link
 * #horizon(long)}, which the {@link ExpiryDriver} calls from its own thread.
 */
public final class StateExpiry {
    /** List appends within this many milliseconds share a delete key (at most this late). */
    static final long MAX_LIST_GRAIN_MS = 1000;

    private final String stateName;
    private final StateDescriptor.Type type;
    private final boolean timestamped;
    /** Non-null for the contents state of a window operator. */
    private final WindowExpiry window;
    private long floor;
    /** Restored from data without delete keys: everything stays at the maximum. Read by the driver. */
    private volatile boolean maxFloor;
    /** Window contents: the horizon of the restored engine (0 if none). */
    private long restoredHorizon;
    private long listGrainMs = MAX_LIST_GRAIN_MS;
    /** TTL in milliseconds while the horizon is active, else 0. Read by the driver thread. */
    private volatile long activeTtlMs;
    private volatile String status;

    private StateExpiry(String stateName, StateDescriptor.Type type, boolean timestamped, WindowExpiry window,
            long floor) {
        this.stateName = stateName;
        this.type = type;
        this.timestamped = timestamped && window == null;
        this.window = window;
        this.floor = floor;
        this.maxFloor = floor == LetheDb.MAX_DELETE_KEY;
        this.status = window != null ? windowStatus() : timestamped ? "off: the state's TTL is not configured yet"
                : "off: no TTL";
    }

    /**
     * The expiry of a state with this serializer, of the operator {@code window} describes: its
     * window contents (by name, with a {@code TimeWindow} namespace) carry window delete keys.
     *
     * @param floor the largest delete key the state issued before (from a restore), 0 if none
     */
    public static StateExpiry forState(String stateName, StateDescriptor.Type type, TypeSerializer<?> stateSerializer,
            TypeSerializer<?> namespaceSerializer, WindowExpiry window, long floor) {
        boolean contents = window.isWindowOperator() && WindowExpiry.CONTENTS_STATE.equals(stateName)
                && namespaceSerializer instanceof TimeWindow.Serializer && type != StateDescriptor.Type.MAP;
        return new StateExpiry(stateName, type, TtlAwareSerializer.isSerializerTtlEnabled(stateSerializer),
                contents ? window : null, floor);
    }

    private String windowStatus() {
        if (maxFloor) {
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

    /**
     * Applies the TTL configuration of the state's descriptor: the horizon follows the TTL time
     * provider when the state has TTL with cleanup in background (Flink's default, the setting
     * under which RocksDB runs its compaction filter).
     *
     * @param horizonPeriodMs how often the horizon moves ({@link ExpiryDriver#periodMs()})
     * @return whether the horizon is active
     */
    public boolean configure(StateTtlConfig ttl, long horizonPeriodMs) {
        if (window != null) {
            status = windowStatus();
        } else if (!timestamped) {
            activeTtlMs = 0;
            status = "off: no TTL";
        } else if (ttl == null || !ttl.isEnabled()) {
            activeTtlMs = 0;
            status = "off: the values carry TTL timestamps, but the descriptor has no TTL";
        } else if (!ttl.getCleanupStrategies().inRocksdbCompactFilter()) {
            activeTtlMs = 0;
            status = "off: TTL cleanup in background is disabled for this state";
        } else {
            long ttlMs = Math.max(1, ttl.getTimeToLive().toMillis());
            // Rounding delays a list append's removal by up to the grain: at most a sixteenth of the
            // TTL, and no more than the horizon's own period, so both fit in D_th's slack.
            listGrainMs = Math.max(1, Math.min(Math.min(MAX_LIST_GRAIN_MS, horizonPeriodMs), ttlMs / 16));
            activeTtlMs = ttlMs;
            status = maxFloor
                    ? "off: restored from a checkpoint written before delete keys (format 1)"
                    : "active: TTL " + ttlMs + " ms, expired entries leave by the horizon";
        }
        return isActive();
    }

    public String stateName() {
        return stateName;
    }

    /** Whether a horizon removes this state's expired entries. */
    public boolean isActive() {
        if (maxFloor) {
            return false;
        }
        return window != null ? window.isActive() : activeTtlMs > 0;
    }

    /** "active: ..." or "off: why", for the log and the metric. */
    public String status() {
        if (window != null) {
            return windowStatus();  // checks on the operator's timers may turn it off at any time
        }
        return status;
    }

    public boolean isTimestamped() {
        return timestamped;
    }

    /** The largest delete key issued so far (carried by checkpoints). */
    public long floor() {
        return floor;
    }

    /** Raises the floor to a delete key restored data carries. */
    public void raiseFloor(long deleteKey) {
        if (Long.compareUnsigned(deleteKey, floor) > 0) {
            floor = deleteKey;
            maxFloor = floor == LetheDb.MAX_DELETE_KEY;
        }
    }

    /** The delete key of a serialized value, map entry or single list element written under {@code key}. */
    public long forPut(byte[] key, byte[] value) {
        if (window != null) {
            return forWindowWrite(key);
        }
        if (!timestamped) {
            return LetheDb.MAX_DELETE_KEY;
        }
        long ts = readTimestamp(value, timestampOffset());
        return issue(type == StateDescriptor.Type.LIST ? roundUp(ts) : ts);
    }

    /** The delete key of list elements written together ({@link TtlValue}s when timestamped). */
    public long forListElements(byte[] key, Collection<?> elements) {
        if (window != null) {
            return forWindowWrite(key);
        }
        if (!timestamped) {
            return LetheDb.MAX_DELETE_KEY;
        }
        long max = 0;
        for (Object e : elements) {
            max = Math.max(max, ((TtlValue<?>) e).getLastAccessTimestamp());
        }
        return issue(roundUp(max));
    }

    /**
     * The delete key of data this state wrote before, rewritten under {@code key} without reading
     * its timestamps (merged namespaces), and of a point delete of {@code key}: at least the delete
     * key of every version it covers.
     */
    public long forEarlierData(byte[] key) {
        if (window != null) {
            return forWindow(WindowExpiry.maxTimestampOfKey(key));
        }
        return timestamped ? floor : LetheDb.MAX_DELETE_KEY;
    }

    /** The delete key of a point delete of {@code key} (a clear): at least that of every version. */
    public long forDelete(byte[] key) {
        if (window != null) {
            long maxTs = WindowExpiry.maxTimestampOfKey(key);
            window.cleared(maxTs);
            return forWindow(maxTs);
        }
        return forEarlierData(key);
    }

    /**
     * The exact delete key of restored data (an entry of a canonical snapshot, in the restored
     * serializer's format); raises the floor to it.
     */
    public long forRestored(byte[] key, byte[] value, TypeSerializer<?> stateSerializer) throws IOException {
        if (window != null) {
            // Nothing is known of how the savepoint's windows were cleaned up: they stay.
            window.restoredFromSavepoint(WindowExpiry.maxTimestampOfKey(key));
            return LetheDb.MAX_DELETE_KEY;
        }
        if (!timestamped) {
            return LetheDb.MAX_DELETE_KEY;
        }
        long dk;
        if (type == StateDescriptor.Type.LIST) {
            TypeSerializer<?> elements = ((ListSerializer<?>) stateSerializer).getElementSerializer();
            DataInputDeserializer in = new DataInputDeserializer(value);
            long max = 0;
            while (in.available() > 0) {
                Object e = ListDelimitedSerializer.deserializeNextElement(in, elements);
                max = Math.max(max, ((TtlValue<?>) e).getLastAccessTimestamp());
            }
            dk = roundUp(max);
        } else {
            dk = Math.max(0, readTimestamp(value, timestampOffset()));
        }
        raiseFloor(dk);
        return dk;
    }

    /** The delete key of a value rewritten at {@code now} (state migration). */
    public long forRewrite(byte[] key, byte[] value, long now) {
        if (window != null) {
            return forWindow(WindowExpiry.maxTimestampOfKey(key));
        }
        if (timestamped && type == StateDescriptor.Type.LIST) {
            return issue(roundUp(Math.max(now, floor)));
        }
        return forPut(key, value);
    }

    /**
     * The horizon for the TTL time provider's {@code now}: entries with a delete key below it are
     * expired. 0 (nothing) while inactive.
     */
    public long horizon(long now) {
        if (!isActive()) {
            return 0;
        }
        if (window != null) {
            return window.horizon();
        }
        long ttl = activeTtlMs;
        return now - ttl + 1 <= 0 ? 0 : now - ttl + 1;
    }

    /**
     * A window's max timestamp, raised to the horizon the engine may have: after a restore the
     * operator forgets its watermark until the next one arrives and may write to windows it had
     * cleaned up before (Flink fires them again as late firings). Those writes must stay visible
     * until the window is cleaned up again, which the horizon passes only later. In normal
     * operation a window written is never below the horizon, and this is its max timestamp.
     */
    private long forWindow(long maxTimestamp) {
        if (maxFloor || window.belowFloor(maxTimestamp)) {
            return LetheDb.MAX_DELETE_KEY;
        }
        return Math.max(Math.max(0, maxTimestamp), Math.max(restoredHorizon, window.horizonUpperBound()));
    }

    /** A write of window contents: the key is read once, for the checks and the delete key. */
    private long forWindowWrite(byte[] key) {
        long maxTs = WindowExpiry.maxTimestampOfKey(key);
        window.wrote(maxTs);
        return forWindow(maxTs);
    }

    /** The engine horizon this state's column family was restored with (window contents). */
    public void setRestoredHorizon(long horizon) {
        this.restoredHorizon = horizon;
    }

    /** Where the timestamp sits in one serialized value of this state. */
    int timestampOffset() {
        return type == StateDescriptor.Type.MAP ? 1 : 0;
    }

    /** The timestamp at {@code offset}, as TtlSerializer wrote it (big-endian). */
    static long readTimestamp(byte[] b, int offset) {
        if (b.length < offset + Long.BYTES) {
            throw new IllegalArgumentException("A TTL value of " + b.length + " bytes has no timestamp at offset "
                    + offset);
        }
        long v = 0;
        for (int i = 0; i < Long.BYTES; i++) {
            v = (v << 8) | (b[offset + i] & 0xFF);
        }
        return v;
    }

    private long roundUp(long ts) {
        if (ts <= 0) {
            return 0;
        }
        long r = ts % listGrainMs;
        return r == 0 || ts > Long.MAX_VALUE - listGrainMs ? ts : ts - r + listGrainMs;
    }

    /** Never below 0, never below an earlier delete key of this state. */
    private long issue(long deleteKey) {
        long dk = Math.max(deleteKey, 0);
        if (Long.compareUnsigned(dk, floor) < 0) {
            dk = floor;
        }
        floor = dk;
        return dk;
    }
}
