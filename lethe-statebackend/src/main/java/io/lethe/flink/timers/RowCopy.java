package io.lethe.flink.timers;

import io.lethe.engine.LetheDb;

import org.apache.flink.runtime.state.CompositeKeySerializationUtils;

import java.util.Arrays;

/**
 * How a restore that merges snapshots (another parallelism) copies one snapshot's rows into the
 * engine it builds. State rows go as they are. Timer rows follow the snapshot's {@link QueueRecord}
 * and the rule of {@link TimerStore}: a fired timer its horizon had not removed yet stays behind,
 * and a pending one whose delete key lies below the target's horizon becomes sticky, or that
 * horizon would remove it before it fires.
 */
public final class RowCopy {
    public static final RowCopy AS_IS = new RowCopy(null, 0);

    private final QueueRecord record;
    private final long targetHorizon;

    private RowCopy(QueueRecord record, long targetHorizon) {
        this.record = record;
        this.targetHorizon = targetHorizon;
    }

    /** For the rows of a timer queue with this record, into a column family with this horizon. */
    public static RowCopy timers(QueueRecord record, long targetHorizon) {
        return new RowCopy(record, targetHorizon);
    }

    /** False for a row that stays behind: a fired timer. */
    public boolean keep(byte[] row, long deleteKey, int keyGroupPrefixBytes) {
        if (record == null || deleteKey == LetheDb.MAX_DELETE_KEY) {
            return true;
        }
        byte[] lastPolled =
                record.lastPolled().get(CompositeKeySerializationUtils.extractKeyGroup(keyGroupPrefixBytes, row));
        return lastPolled == null || Arrays.compareUnsigned(row, lastPolled) > 0;
    }

    /** The row's delete key in the target. */
    public long deleteKey(long deleteKey) {
        if (record == null || Long.compareUnsigned(deleteKey, targetHorizon) >= 0) {
            return deleteKey;
        }
        return LetheDb.MAX_DELETE_KEY;
    }
}
