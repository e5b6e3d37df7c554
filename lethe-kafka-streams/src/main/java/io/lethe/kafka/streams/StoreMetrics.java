package io.lethe.kafka.streams;

import io.lethe.engine.LetheDb;
import io.lethe.engine.Statistics;
import io.lethe.engine.Ticker;

import org.apache.kafka.common.metrics.Gauge;
import org.apache.kafka.common.metrics.Sensor.RecordingLevel;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.processor.internals.ProcessorContextUtils;
import org.apache.kafka.streams.processor.internals.metrics.StreamsMetricsImpl;

import java.util.function.ToLongFunction;

/**
 * A store's engine metrics among Kafka Streams' store metrics (group {@code stream-state-metrics},
 * tag {@code lethe-state-id} naming the store): every engine counter under its own name, and the
 * memtable bytes, files, bytes in files, live entries, the oldest delete key on disk and the age of
 * the oldest tombstone. Gauges
 * read one snapshot of the engine's statistics at most once a second, and read 0 before the engine
 * opens.
 */
final class StoreMetrics {
    private static final long SNAPSHOT_NANOS = 1_000_000_000L;

    private final StoreDatabase store;
    private Statistics snapshot;
    private long snapshotAt;

    private StoreMetrics(StoreDatabase store) {
        this.store = store;
    }

    /** Registers the store's gauges; Kafka Streams' metered layer removes them when the store closes. */
    static void register(StoreDatabase store, StateStoreContext context, String storeName) {
        StoreMetrics m = new StoreMetrics(store);
        StreamsMetricsImpl metrics = ProcessorContextUtils.metricsImpl(context);
        String taskId = context.taskId().toString();
        for (Ticker t : Ticker.values()) {
            m.add(metrics, taskId, storeName, t.metricName(), "Lethe engine counter " + t.metricName(), s -> s.get(t));
        }
        m.add(metrics, taskId, storeName, "memtable-bytes", "Bytes in the store's memtables",
                s -> s.columnFamilies().stream().mapToLong(Statistics.ColumnFamily::memtableBytes).sum());
        m.add(metrics, taskId, storeName, "files", "Table files of the store",
                s -> levels(s, Statistics.Level::files));
        m.add(metrics, taskId, storeName, "total-bytes", "Bytes in the store's table files",
                s -> levels(s, Statistics.Level::bytes));
        m.add(metrics, taskId, storeName, "horizon", "The store's expiry horizon: entries below it are gone",
                s -> s.columnFamilies().stream().mapToLong(Statistics.ColumnFamily::horizon).max().orElse(0));
        m.add(metrics, taskId, storeName, "entries", "Entries in the store's table files",
                s -> levels(s, Statistics.Level::entries));
        metrics.addStoreLevelMutableMetric(taskId, LetheKeyValueBytesStoreSupplier.METRICS_SCOPE, storeName,
                "oldest-delete-key-on-disk", "The smallest delete key of any page in the store's files (-1: none):"
                        + " for a window store the start of the oldest window still on disk, for a session store the"
                        + " end of the oldest session", RecordingLevel.INFO, (Gauge<Long>) (config, now) ->
                        m.oldestDeleteKey());
        m.add(metrics, taskId, storeName, "oldest-tombstone-age-ms",
                "Age of the oldest tombstone in the store's files: FADE keeps it below the delete persistence"
                        + " threshold",
                s -> s.columnFamilies().stream().mapToLong(Statistics.ColumnFamily::oldestTombstoneAgeMicros).max()
                        .orElse(0) / 1000);
    }

    private void add(StreamsMetricsImpl metrics, String taskId, String storeName, String name, String description,
                     ToLongFunction<Statistics> value) {
        metrics.addStoreLevelMutableMetric(taskId, LetheKeyValueBytesStoreSupplier.METRICS_SCOPE, storeName, name,
                description, RecordingLevel.INFO, (Gauge<Long>) (config, now) -> {
                    Statistics s = snapshot();
                    return s == null ? 0L : value.applyAsLong(s);
                });
    }

    private synchronized Statistics snapshot() {
        LetheDb db = store.openedDb();
        if (db == null) {
            return null;
        }
        long now = System.nanoTime();
        if (snapshot == null || now - snapshotAt > SNAPSHOT_NANOS) {
            snapshot = db.statistics();
            snapshotAt = now;
        }
        return snapshot;
    }

    private long oldestDeleteKey() {
        LetheDb db = store.openedDb();
        try {
            // All ones (unsigned) when the files hold nothing: -1.
            return db == null ? -1 : Long.parseUnsignedLong(db.property(store.family(), "lethe.oldest-delete-key"));
        } catch (IllegalStateException e) {
            return -1;  // closed meanwhile
        }
    }

    private static long levels(Statistics s, ToLongFunction<Statistics.Level> f) {
        return s.columnFamilies().stream().flatMap(c -> c.levels().stream()).mapToLong(f).sum();
    }
}
