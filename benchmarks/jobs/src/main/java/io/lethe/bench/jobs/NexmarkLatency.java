package io.lethe.bench.jobs;

import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;

import java.io.Serializable;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.List;
import java.util.stream.IntStream;

/**
 * The latency of a paced Nexmark run's results. The source emits event n at its rate, which is also the
 * rate of event time, so event n leaves the source {@code (dateTime - base)} after the first event did.
 * A result row that carries the event times of its inputs (columns named {@code dateTime} or {@code
 * *_dateTime}) was caused by the newest of them: its latency is the time from that event's emission to
 * the row reaching the sink. Only rows that add a result count (+I, +U); a retraction carries the old
 * row's times. Queries whose rows carry no event time (aggregates) have no latency.
 *
 * <p>The first event's emission time is kept in this JVM ({@link #firstEmitted}), where the MiniCluster
 * runs the job: one run at a time.
 */
final class NexmarkLatency implements Serializable {
    private static final long serialVersionUID = 1L;
    private static volatile long firstEventNanos;

    private final int[] timeFields;
    private final long baseMillis;

    NexmarkLatency(int[] timeFields, long baseMillis) {
        this.timeFields = timeFields.clone();
        this.baseMillis = baseMillis;
    }

    /** For a result with these column names; null when none carries an event time. */
    static NexmarkLatency of(List<String> columns, long baseMillis) {
        int[] fields = IntStream.range(0, columns.size())
                .filter(i -> columns.get(i).equals("dateTime") || columns.get(i).endsWith("_dateTime")).toArray();
        return fields.length == 0 ? null : new NexmarkLatency(fields, baseMillis);
    }

    /** Called by the source as it emits event 0. */
    static void firstEmitted() {
        firstEventNanos = System.nanoTime();
    }

    /** What {@link #micros} returns for a row that does not count. */
    static final long NOT_COUNTED = Long.MIN_VALUE;

    /**
     * The row's latency in microseconds at {@code nowNanos} (negative if it came before its event was due:
     * the source's pacing runs a little ahead at times), or {@link #NOT_COUNTED}.
     */
    long micros(Row row, long nowNanos) {
        if (row.getKind() != RowKind.INSERT && row.getKind() != RowKind.UPDATE_AFTER) {
            return NOT_COUNTED;
        }
        long newest = Long.MIN_VALUE;
        for (int f : timeFields) {
            if (row.getField(f) instanceof LocalDateTime t) {
                newest = Math.max(newest, t.toInstant(ZoneOffset.UTC).toEpochMilli());
            }
        }
        if (newest == Long.MIN_VALUE) {
            return NOT_COUNTED;
        }
        long emitted = firstEventNanos + (newest - baseMillis) * 1_000_000;
        return (nowNanos - emitted) / 1_000;
    }
}
