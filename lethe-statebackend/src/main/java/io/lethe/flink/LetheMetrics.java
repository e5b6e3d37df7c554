package io.lethe.flink;

import io.lethe.engine.HeapUsage;
import io.lethe.engine.LetheDb;
import io.lethe.engine.Statistics;
import io.lethe.engine.Ticker;

import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.MetricGroup;

import java.util.function.ToLongFunction;

/**
 * Engine statistics as gauges under the backend's metric group ({@code <operator>.lethe.*}): every
 * engine counter ({@link Ticker}, by its metric name), sums over the column families and levels, and
 * the C allocator's heaps of the process ({@link HeapUsage}: the same figures for every engine).
 * Reporters read gauges from their own thread every few seconds; one statistics call serves
 * all gauges for {@link #REFRESH_NANOS}, and after the engine closed the last values remain.
 *
 * <p>Thread-safe.
 */
final class LetheMetrics {
    /** How long one statistics snapshot serves the gauges: reporters poll every few seconds. */
    static final long REFRESH_NANOS = 1_000_000_000L;
    static final String GROUP = "lethe";

    private final LetheDb db;
    private MetricGroup group;
    private Statistics cached;
    private HeapUsage cachedHeap;
    private long cachedAtNanos;

    private LetheMetrics(LetheDb db) {
        this.db = db;
    }

    /** The group of the gauges ({@code lethe}). */
    MetricGroup group() {
        return group;
    }

    /** Takes the final statistics before the engine closes: the gauges report them afterwards. */
    synchronized void refreshBeforeClose() {
        cachedAtNanos = System.nanoTime() - 2 * REFRESH_NANOS;
        current();
    }

    /** Registers the engine gauges in the group {@code lethe}. */
    static LetheMetrics register(LetheDb db, MetricGroup parent) {
        LetheMetrics m = new LetheMetrics(db);
        MetricGroup g = parent.addGroup(GROUP);
        m.group = g;
        for (Ticker t : Ticker.values()) {
            m.gauge(g, t.metricName(), s -> s.get(t));
        }
        m.gauge(g, "memtable-bytes", s -> s.columnFamilies().stream().mapToLong(Statistics.ColumnFamily::memtableBytes).sum());
        m.gauge(g, "files", s -> sumLevels(s, Statistics.Level::files));
        m.gauge(g, "entries", s -> sumLevels(s, Statistics.Level::entries));
        m.gauge(g, "point-tombstones", s -> sumLevels(s, Statistics.Level::pointTombstones));
        m.gauge(g, "range-tombstones", s -> sumLevels(s, Statistics.Level::rangeTombstones));
        m.gauge(g, "compactions", s -> s.get(Ticker.COMPACTIONS_LEVEL0) + s.get(Ticker.COMPACTIONS_SATURATION)
                + s.get(Ticker.COMPACTIONS_MANUAL) + s.get(Ticker.COMPACTIONS_DELETE_DRIVEN)
                + s.get(Ticker.COMPACTIONS_PAGE_REWRITE));
        m.gauge(g, "oldest-tombstone-age-ms", s -> s.columnFamilies().stream()
                .mapToLong(Statistics.ColumnFamily::oldestTombstoneAgeMicros).max().orElse(0) / 1000);
        m.heapGauge(g, "native-heap-in-use-bytes", HeapUsage::inUseBytes);
        m.heapGauge(g, "native-heap-free-bytes", HeapUsage::freeBytes);
        return m;
    }

    private static long sumLevels(Statistics s, ToLongFunction<Statistics.Level> f) {
        return s.columnFamilies().stream().flatMap(cf -> cf.levels().stream()).mapToLong(f).sum();
    }

    private void gauge(MetricGroup group, String name, ToLongFunction<Statistics> value) {
        group.gauge(name, (Gauge<Long>) () -> {
            Statistics s = current();
            return s == null ? 0L : value.applyAsLong(s);
        });
    }

    private void heapGauge(MetricGroup group, String name, ToLongFunction<HeapUsage> value) {
        group.gauge(name, (Gauge<Long>) () -> {
            HeapUsage h = currentHeap();
            return h == null ? 0L : value.applyAsLong(h);
        });
    }

    /** The heaps as of the statistics the gauges serve now. */
    private synchronized HeapUsage currentHeap() {
        current();
        return cachedHeap;
    }

    private synchronized Statistics current() {
        long now = System.nanoTime();
        if (cached == null || now - cachedAtNanos > REFRESH_NANOS) {
            try {
                cached = db.statistics();
                cachedHeap = HeapUsage.now();
                cachedAtNanos = now;
            } catch (IllegalStateException e) {
                if (!db.isClosed()) {
                    throw e;
                }
                // The backend was disposed: keep reporting the last values.
            }
        }
        return cached;
    }
}
