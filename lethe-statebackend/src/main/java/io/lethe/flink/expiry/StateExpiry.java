package io.lethe.flink.expiry;

import io.lethe.engine.LetheDb;

import org.apache.flink.api.common.state.StateTtlConfig;
import org.apache.flink.api.common.typeutils.TypeSerializer;

import java.io.IOException;
import java.util.Collection;

/**
 * The expiry policy of one state: the delete keys it writes and the horizon that expires its
 * entries in the engine. One of three: {@link NoExpiry} (every entry at the maximum delete key,
 * never removed by a horizon), {@link TtlExpiry} (delete keys from Flink's TTL timestamps) and
 * {@link WindowContentsExpiry} (delete keys from the window of each entry); {@link
 * StateExpiries#of} picks the one for a state.
 *
 * <p><b>Monotone.</b> The engine requires that a newer version of a key never has a smaller delete
 * key than an older one. Every policy keeps the largest delete key its state issued (its
 * <em>floor</em>), which checkpoints carry along; a restore raises it.
 *
 * <p><b>Clears.</b> A point delete carries a delete key too, at least that of every version it
 * deletes: once the horizon passes it, the tombstone leaves with the data, and a clear whose data
 * never left the memtable writes nothing to disk.
 *
 * <p>Methods named {@code issue...} are commands: they return the delete key of a write and record
 * it (the floor, the window's bookkeeping). Not thread-safe: used by the task thread (writes,
 * checkpoint preparation), except {@link #horizon(long)}, {@link #isActive()} and {@link
 * #status()}, which the {@link ExpiryDriver} and metric reporters call from their own threads.
 */
public abstract class StateExpiry {
    private final String stateName;
    private long floor;
    /** Restored from data without delete keys: everything stays at the maximum. Read by the driver. */
    private volatile boolean maxFloor;

    StateExpiry(String stateName, long floor) {
        this.stateName = stateName;
        this.floor = floor;
        this.maxFloor = floor == LetheDb.MAX_DELETE_KEY;
    }

    public final String stateName() {
        return stateName;
    }

    /**
     * Applies the TTL configuration of the state's descriptor.
     *
     * @param horizonPeriodMs how often the horizon moves ({@link ExpiryDriver#periodMs()})
     * @return whether the horizon is active
     */
    public abstract boolean applyTtlConfig(StateTtlConfig ttl, long horizonPeriodMs);

    /** Whether a horizon removes this state's expired entries. */
    public abstract boolean isActive();

    /** "active: ..." or "off: why", for the log and the metric. */
    public abstract String status();

    /** Whether the state's values carry Flink's TTL timestamps (and so their delete keys). */
    public boolean isTimestamped() {
        return false;
    }

    /** The largest delete key issued so far (carried by checkpoints). */
    public final long floor() {
        return floor;
    }

    /** Raises the floor to a delete key restored data carries. */
    public final void raiseFloor(long deleteKey) {
        if (Long.compareUnsigned(deleteKey, floor) > 0) {
            floor = deleteKey;
            maxFloor = floor == LetheDb.MAX_DELETE_KEY;
        }
    }

    /** Whether restored data without delete keys holds every entry at the maximum. */
    final boolean isAtMaxFloor() {
        return maxFloor;
    }

    /** Issues the delete key of a serialized value, map entry or single list element written under {@code key}. */
    public abstract long issuePut(byte[] key, byte[] value);

    /** Issues the delete key of list elements written together ({@code TtlValue}s when timestamped). */
    public abstract long issueListElements(byte[] key, Collection<?> elements);

    /**
     * The delete key of data this state wrote before, rewritten under {@code key} without reading
     * its timestamps (merged namespaces): at least the delete key of every version it covers.
     */
    public abstract long earlierDataDeleteKey(byte[] key);

    /** Issues the delete key of a point delete of {@code key} (a clear): at least that of every version. */
    public long issueDelete(byte[] key) {
        return earlierDataDeleteKey(key);
    }

    /**
     * Issues the exact delete key of restored data (an entry of a canonical snapshot, in the
     * restored serializer's format) and raises the floor to it.
     */
    public abstract long issueRestored(byte[] key, byte[] value, TypeSerializer<?> stateSerializer)
            throws IOException;

    /** Issues the delete key of a value rewritten at {@code now} (state migration). */
    public long issueRewrite(byte[] key, byte[] value, long now) {
        return issuePut(key, value);
    }

    /**
     * The horizon for the TTL time provider's {@code now}: entries with a delete key below it are
     * expired. 0 (nothing) while inactive.
     */
    public abstract long horizon(long now);

    /** Takes note of the engine horizon this state's column family was restored with. */
    public void restoreHorizon(long horizon) {}

    /** Never below 0, never below an earlier delete key of this state; becomes the floor. */
    final long issue(long deleteKey) {
        long dk = Math.max(deleteKey, 0);
        if (Long.compareUnsigned(dk, floor) < 0) {
            dk = floor;
        }
        floor = dk;
        return dk;
    }
}
