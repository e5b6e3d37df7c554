package io.lethe.kafka.streams;

import io.lethe.engine.LetheException;

import org.apache.kafka.common.metrics.Sensor;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.processor.internals.InternalProcessorContext;
import org.apache.kafka.streams.processor.internals.ProcessorContextUtils;
import org.apache.kafka.streams.processor.internals.metrics.TaskMetrics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Map;

/**
 * Expiry by stream time for window and session stores. Stream time is the largest timestamp the
 * store has seen; an entry whose timestamp is at or below stream time minus the retention period is
 * expired. Reads never return one, a write of one is dropped and counted in Kafka Streams'
 * dropped-records metric, and the engine's horizon (entries whose delete key, their timestamp, lies
 * below it are gone, also ones written later) follows behind, so expired entries leave the files by
 * page drops and within the delete persistence threshold.
 *
 * <p>Behind, because input that Kafka Streams has processed but not yet committed is processed again
 * after a crash. A horizon moved for that input could not be taken back, and would drop windows that
 * the replay writes while they are live. So the horizon moves only to where expiry stood at a point
 * whose input is committed:
 *
 * <ul>
 *   <li>at a flush, to where expiry stood at the flush before (a store may flush before the commit
 *       of what it holds);
 *   <li>while records arrive, at most once a commit interval (and at least a second apart), to where
 *       expiry stood two such samples before: Kafka Streams commits every commit interval, and under
 *       {@code exactly_once_v2} it flushes a running store only when it closes, so the horizon must
 *       not wait for flushes.
 * </ul>
 *
 * <p>After a restart, stream time is recovered from the horizon (it was at least the horizon plus
 * the retention minus one) and moves on with the records restored and processed. Before the
 * horizon first moves nothing can be expired, so nothing is filtered either.
 */
final class Retention {
    private static final Logger LOG = LoggerFactory.getLogger(Retention.class);
    private static final long MIN_SAMPLE_INTERVAL_MS = 1_000;

    private final long retentionPeriod;
    private long streamTime = Long.MIN_VALUE;
    private long horizon;
    private long nextHorizon;  // where expiry stood at the last flush: the horizon of the next one
    private long sampleIntervalMs;
    private long sampledAt;
    private long olderSample;  // where expiry stood at the sample before the last, and at the last
    private long newerSample;
    private Sensor dropped;
    private InternalProcessorContext<?, ?> context;
    private StoreDatabase store;

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
        this.store = store;
        this.context = ProcessorContextUtils.asInternalProcessorContext(context);
        this.sampleIntervalMs = Math.max(MIN_SAMPLE_INTERVAL_MS, commitIntervalMs(context));
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

    /**
     * Moves stream time to timestamp if it is later, and the horizon to where expiry stood two samples
     * ago once a sample interval has passed.
     */
    void observe(long timestamp) {
        streamTime = Math.max(streamTime, timestamp);
        long now = context.currentSystemTimeMs();
        if (now - sampledAt >= sampleIntervalMs) {
            long target = olderSample;
            olderSample = newerSample;
            newerSample = Math.max(0, minLive());
            sampledAt = now;
            moveHorizon(target);
        }
    }

    /** The application's commit interval (Kafka Streams' default for its guarantee when not set). */
    private static long commitIntervalMs(StateStoreContext context) {
        Map<String, Object> configs = context.appConfigs();
        Object interval = configs.get(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG);
        if (interval != null) {
            return Long.parseLong(interval.toString());
        }
        Object guarantee = configs.get(StreamsConfig.PROCESSING_GUARANTEE_CONFIG);
        return StreamsConfig.EXACTLY_ONCE_V2.equals(guarantee) ? 100 : 30_000;
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

    /** At a flush: moves the engine's horizon up to what had expired at the flush before. */
    void flushed() {
        long target = nextHorizon;
        nextHorizon = Math.max(0, minLive());
        moveHorizon(target);
    }

    private void moveHorizon(long target) {
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
