package io.lethe.flink.expiry;

import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.api.common.state.StateTtlConfig;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.base.ListSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.runtime.state.ListDelimitedSerializer;
import org.apache.flink.runtime.state.ttl.TtlValue;

import java.io.IOException;
import java.util.Collection;

/**
 * A state whose serializer is Flink's TTL serializer: an 8-byte big-endian last-access timestamp
 * before every user value (at offset 0 of a value, reducing or aggregating entry and of each list
 * element, at offset 1 of a map entry, after its null flag).
 *
 * <p>The delete key is that timestamp, not the expiration time: it needs no TTL duration, so
 * restores (which see serializers, not descriptors) write the same delete keys as the running job,
 * and a TTL changed across a restore just moves the horizon. The horizon is {@code now - ttl + 1},
 * which removes exactly the entries Flink considers expired ({@code ts + ttl <= now}).
 *
 * <p>Timestamps come from the TTL time provider, a wall clock that may step back, so every delete
 * key is raised to the floor. Raising only delays physical removal; Flink still filters expired
 * values when reading. List appends are rounded up to a grain so that the operands of a burst
 * share one delete key and fold into one entry on disk.
 */
final class TtlExpiry extends StateExpiry {
    /** List appends within this many milliseconds share a delete key (at most this late). */
    static final long MAX_LIST_GRAIN_MS = 1000;

    private final StateDescriptor.Type type;
    private long listGrainMs = MAX_LIST_GRAIN_MS;
    /** TTL in milliseconds while the horizon is active, else 0. Read by the driver thread. */
    private volatile long activeTtlMs;
    private volatile String status = "off: the state's TTL is not configured yet";

    TtlExpiry(String stateName, StateDescriptor.Type type, long floor) {
        super(stateName, floor);
        this.type = type;
    }

    /**
     * The horizon follows the TTL time provider when the state has TTL with cleanup in background
     * (Flink's default, the setting under which RocksDB runs its compaction filter).
     */
    @Override
    public boolean applyTtlConfig(StateTtlConfig ttl, long horizonPeriodMs) {
        activeTtlMs = 0;
        if (ttl == null || !ttl.isEnabled()) {
            status = "off: the values carry TTL timestamps, but the descriptor has no TTL";
        } else if (!ttl.getCleanupStrategies().inRocksdbCompactFilter()) {
            status = "off: TTL cleanup in background is disabled for this state";
        } else if (isAtMaxFloor()) {
            status = "off: restored from a checkpoint written before delete keys (format 1)";
        } else {
            long ttlMs = Math.max(1, ttl.getTimeToLive().toMillis());
            // Rounding delays a list append's removal by up to the grain: at most a sixteenth of the
            // TTL, and no more than the horizon's own period, so both fit in D_th's slack.
            listGrainMs = Math.max(1, Math.min(Math.min(MAX_LIST_GRAIN_MS, horizonPeriodMs), ttlMs / 16));
            activeTtlMs = ttlMs;
            status = "active: TTL " + ttlMs + " ms, expired entries leave by the horizon";
        }
        return isActive();
    }

    @Override
    public boolean isActive() {
        return !isAtMaxFloor() && activeTtlMs > 0;
    }

    @Override
    public String status() {
        return status;
    }

    @Override
    public boolean isTimestamped() {
        return true;
    }

    @Override
    public long issuePut(byte[] key, byte[] value) {
        long ts = Timestamps.read(value, timestampOffset());
        return issue(type == StateDescriptor.Type.LIST ? roundUp(ts) : ts);
    }

    @Override
    public long issueListElements(byte[] key, Collection<?> elements) {
        long max = 0;
        for (Object e : elements) {
            max = Math.max(max, ((TtlValue<?>) e).getLastAccessTimestamp());
        }
        return issue(roundUp(max));
    }

    @Override
    public long earlierDataDeleteKey(byte[] key) {
        return floor();
    }

    @Override
    public long issueRestored(byte[] key, byte[] value, TypeSerializer<?> stateSerializer) throws IOException {
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
            dk = Math.max(0, Timestamps.read(value, timestampOffset()));
        }
        raiseFloor(dk);
        return dk;
    }

    /** A rewritten list keeps no timestamp of its own: it takes the later of now and the floor. */
    @Override
    public long issueRewrite(byte[] key, byte[] value, long now) {
        if (type == StateDescriptor.Type.LIST) {
            return issue(roundUp(Math.max(now, floor())));
        }
        return issuePut(key, value);
    }

    @Override
    public long horizon(long now) {
        if (!isActive()) {
            return 0;
        }
        long ttl = activeTtlMs;
        return now - ttl + 1 <= 0 ? 0 : now - ttl + 1;
    }

    /** Where the timestamp sits in one serialized value of this state. */
    private int timestampOffset() {
        return type == StateDescriptor.Type.MAP ? 1 : 0;
    }

    private long roundUp(long ts) {
        if (ts <= 0) {
            return 0;
        }
        long r = ts % listGrainMs;
        return r == 0 || ts > Long.MAX_VALUE - listGrainMs ? ts : ts - r + listGrainMs;
    }
}
