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
 * <p>A state without TTL timestamps writes the maximum delete key (never removed by a horizon).
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
    private long floor;
    private long listGrainMs = MAX_LIST_GRAIN_MS;
    /** TTL in milliseconds while the horizon is active, else 0. Read by the driver thread. */
    private volatile long activeTtlMs;
    private volatile String status;

    private StateExpiry(String stateName, StateDescriptor.Type type, boolean timestamped, long floor) {
        this.stateName = stateName;
        this.type = type;
        this.timestamped = timestamped;
        this.floor = floor;
        this.status = timestamped ? "off: the state's TTL is not configured yet" : "off: no TTL";
    }

    /**
     * The expiry of a state with this serializer.
     *
     * @param floor the largest delete key the state issued before (from a restore), 0 if none
     */
    public static StateExpiry forState(String stateName, StateDescriptor.Type type, TypeSerializer<?> stateSerializer,
            long floor) {
        return new StateExpiry(stateName, type, TtlAwareSerializer.isSerializerTtlEnabled(stateSerializer), floor);
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
        if (!timestamped) {
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
            status = floor == LetheDb.MAX_DELETE_KEY
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
        return activeTtlMs > 0 && floor != LetheDb.MAX_DELETE_KEY;
    }

    /** "active: ..." or "off: why", for the log and the metric. */
    public String status() {
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
        }
    }

    /** The delete key of a serialized value, map entry or single list element. */
    public long forSerialized(byte[] value) {
        if (!timestamped) {
            return LetheDb.MAX_DELETE_KEY;
        }
        long ts = readTimestamp(value, timestampOffset());
        return issue(type == StateDescriptor.Type.LIST ? roundUp(ts) : ts);
    }

    /** The delete key of list elements written together ({@link TtlValue}s when timestamped). */
    public long forListElements(Collection<?> elements) {
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
     * The delete key of data this state wrote before, without reading its timestamps (merged
     * namespaces): the floor covers every timestamp issued.
     */
    public long forEarlierData() {
        return timestamped ? floor : LetheDb.MAX_DELETE_KEY;
    }

    /**
     * The exact delete key of restored data (a value of a canonical snapshot, in the restored
     * serializer's format); raises the floor to it.
     */
    public long forRestored(byte[] value, TypeSerializer<?> stateSerializer) throws IOException {
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
    public long forRewrite(byte[] value, long now) {
        if (!timestamped) {
            return LetheDb.MAX_DELETE_KEY;
        }
        if (type == StateDescriptor.Type.LIST) {
            return issue(roundUp(Math.max(now, floor)));
        }
        return forSerialized(value);
    }

    /**
     * The horizon for the TTL time provider's {@code now}: entries with a delete key below it are
     * expired. 0 (nothing) while inactive.
     */
    public long horizon(long now) {
        long ttl = activeTtlMs;
        if (ttl <= 0 || floor == LetheDb.MAX_DELETE_KEY || now - ttl + 1 <= 0) {
            return 0;
        }
        return now - ttl + 1;
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
