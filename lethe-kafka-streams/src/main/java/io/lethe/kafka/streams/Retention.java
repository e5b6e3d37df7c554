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

/**
 * Expiry by stream time for window and session stores. Stream time is the largest timestamp the
 * store has seen; an entry whose timestamp is at or below stream time minus the retention period is
 * expired. Reads never return one, a write of one is dropped and counted in Kafka Streams'
 * dropped-records metric, and the engine's horizon (entries whose delete key, their timestamp, lies
 * below it are gone, also ones written later) follows behind, so expired entries leave the files by
 * page drops and within the delete persistence threshold.
 *
 * <p>It must not get ahead of committed input: input that Kafka Streams has processed but not yet
 * committed is processed again after a crash, and a horizon moved for that input could not be taken
 * back; it would drop windows that the replay writes while they are live. So:
 *
 * <ul>
 *   <li>at a flush, the horizon moves to where expiry stands: Kafka Streams flushes a store only
 *       after it committed what the store holds, or while it restores it;
 *   <li>under {@code exactly_once_v2}, while records arrive, at most once a second to where expiry
 *       stands: a crash there wipes the task's stores and restores them from the changelog, and
 *       Kafka Streams flushes a running store only when it closes, so the horizon must not wait for
 *       flushes;
 *   <li>under {@code at_least_once} a store's state survives a crash, and Kafka Streams flushes it
 *       after a commit only once its changelog moved 10,000 records. While records arrive, once a
 *       commit interval (at least a second apart), the horizon moves to where expiry stood two such
 *       samples before: Kafka Streams commits every commit interval.
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
    private long sampleIntervalMs;
    private boolean trailSamples;  // at_least_once: move to the sample before the last, not to now
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
        boolean exactlyOnce = StreamsConfig.EXACTLY_ONCE_V2.equals(
                String.valueOf(context.appConfigs().get(StreamsConfig.PROCESSING_GUARANTEE_CONFIG)));
        this.trailSamples = !exactlyOnce;
        this.sampleIntervalMs = exactlyOnce ? MIN_SAMPLE_INTERVAL_MS
                : Math.max(MIN_SAMPLE_INTERVAL_MS, commitIntervalMs(context));
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
     * Moves stream time to timestamp if it is later, and once a sample interval has passed the horizon
     * to where expiry stands (exactly once) or stood two samples ago (at least once).
     */
    void observe(long timestamp) {
        streamTime = Math.max(streamTime, timestamp);
        long now = context.currentSystemTimeMs();
        if (now - sampledAt >= sampleIntervalMs) {
            long target = trailSamples ? olderSample : Math.max(0, minLive());
            olderSample = newerSample;
            newerSample = Math.max(0, minLive());
            sampledAt = now;
            moveHorizon(target);
        }
    }

    /** The application's commit interval (Kafka Streams' at-least-once default when not set). */
    private static long commitIntervalMs(StateStoreContext context) {
        Object interval = context.appConfigs().get(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG);
        return interval == null ? 30_000 : Long.parseLong(interval.toString());
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

    /** At a flush, which follows the commit of what the store holds: moves the horizon to what has expired. */
    void flushed() {
        moveHorizon(Math.max(0, minLive()));
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
