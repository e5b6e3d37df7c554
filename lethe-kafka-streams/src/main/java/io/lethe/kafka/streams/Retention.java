package io.lethe.kafka.streams;

import io.lethe.engine.LetheException;

import org.apache.kafka.common.metrics.Sensor;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.processor.internals.InternalProcessorContext;
import org.apache.kafka.streams.processor.internals.ProcessorContextUtils;
import org.apache.kafka.streams.processor.internals.metrics.TaskMetrics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Expiry by stream time for window and session stores. Stream time is the largest timestamp the
 * store has seen; an entry whose timestamp is at or below stream time minus the retention period is
 * expired. Reads never return one, a write of one is dropped and counted in Kafka Streams'
 * dropped-records metric, and the engine's horizon (entries whose delete key, their timestamp, lies
 * below it are gone, also ones written later) follows one commit behind, so expired entries leave
 * the files by page drops and within the delete persistence threshold.
 *
 * <p>One commit behind: a store flushes before Kafka Streams commits the transaction or offsets of
 * what it processed, and a crash in between replays that input. A horizon moved for it could not be
 * taken back, and would drop windows that the replay writes while they are live. So each commit
 * moves the horizon to where expiry stood at the commit before, whose input is committed.
 *
 * <p>After a restart, stream time is recovered from the horizon (it was at least the horizon plus
 * the retention minus one) and moves on with the records restored and processed. Before the
 * horizon first moves nothing can be expired, so nothing is filtered either.
 */
final class Retention {
    private static final Logger LOG = LoggerFactory.getLogger(Retention.class);

    private final long retentionPeriod;
    private long streamTime = Long.MIN_VALUE;
    private long horizon;
    private long nextHorizon;  // where expiry stood at the last commit: the horizon of the next one
    private Sensor dropped;
    private InternalProcessorContext<?, ?> context;

    Retention(long retentionPeriod) {
        if (retentionPeriod < 0) {
            throw new IllegalArgumentException("retentionPeriod cannot be negative");
        }
        this.retentionPeriod = retentionPeriod;
    }

    long period() {
        return retentionPeriod;
    }

    void open(StoreDatabase store, StateStoreContext context) {
        this.context = ProcessorContextUtils.asInternalProcessorContext(context);
        this.dropped = TaskMetrics.droppedRecordsSensor(Thread.currentThread().getName(),
                context.taskId().toString(), ProcessorContextUtils.metricsImpl(context));
        store.onOpen(() -> {
            try {
                horizon = store.db().horizon(store.family());
            } catch (LetheException e) {
                throw store.failure("opening", e);
            }
            streamTime = Math.max(streamTime, horizon > 0 ? horizon + retentionPeriod - 1 : Long.MIN_VALUE);
        });
    }

    /** Moves stream time to timestamp if it is later. */
    void observe(long timestamp) {
        streamTime = Math.max(streamTime, timestamp);
    }

    long streamTime() {
        return streamTime;
    }

    /** The earliest timestamp that is not expired. */
    long minLive() {
        return streamTime == Long.MIN_VALUE ? Long.MIN_VALUE : streamTime - retentionPeriod + 1;
    }

    boolean expired(long timestamp) {
        return timestamp < minLive();
    }

    /** Counts a write dropped because it was expired. */
    void drop() {
        dropped.record(1.0d, context.currentSystemTimeMs());
        LOG.warn("Skipping record for expired segment.");
    }

    /** The delete key of an entry with this timestamp (delete keys are unsigned). */
    static long deleteKey(long timestamp) {
        return Math.max(0, timestamp);
    }

    /** At a commit: moves the engine's horizon up to what had expired at the commit before. */
    void advanceHorizon(StoreDatabase store) {
        long target = nextHorizon;
        nextHorizon = Math.max(0, minLive());
        if (target > horizon) {
            try {
                store.db().advanceHorizon(store.family(), target);
            } catch (LetheException e) {
                throw store.failure("expiring entries of", e);
            }
            horizon = target;
        }
    }
}
