package io.lethe.bench.jobs;

import io.lethe.engine.Ticker;

import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.Metric;
import org.apache.flink.metrics.MetricConfig;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.reporter.MetricReporter;
import org.apache.flink.metrics.reporter.MetricReporterFactory;

import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.LongStream;

/**
 * A metric reporter that keeps the gauges of Lethe's engines ({@code <operator>.lethe.*}) and of its
 * asynchronous executor ({@code <operator>.lethe-async.*}) while they are registered, so that a run in
 * this JVM can read them: how many requests Flink's controller handed the executor per batch, what the
 * engines' memory budget holds, and what the C allocator's heaps hold in use and free. Registered with {@link #configure}; other backends have no such gauges,
 * and their sums read 0.
 */
public final class BackendGauges implements MetricReporter {
    /** The group of the asynchronous executor's gauges. */
    static final String EXECUTOR = "lethe-async";
    /** The group of the engine's gauges. */
    static final String ENGINE = "lethe";
    /**
     * The engine gauges of what its memory budget holds: decoded pages, memtables, open tables' index and
     * filters. Every engine on one budget reports the budget's totals.
     */
    static final List<String> BUDGET_HOLDINGS =
            List.of("memory-page-cache-bytes", "memory-write-buffer-bytes", "memory-table-reader-bytes");
    /**
     * The engine gauges of the C allocator's heaps in the process (the same for every engine): what they have
     * in use and what they keep free.
     */
    static final String HEAP_IN_USE = "native-heap-in-use-bytes";
    static final String HEAP_FREE = "native-heap-free-bytes";
    /**
     * The engine gauges of its table files and their expiry, per engine: bytes of the live files, and so far
     * the horizon moves, the bytes of the pages dropped whole and the local storage given back by punching
     * holes for them.
     */
    static final String LIVE_BYTES = Ticker.LIVE_BYTES.metricName();
    static final String HORIZON_ADVANCES = "horizon-advances";
    static final String PAGE_BYTES_DROPPED = Ticker.PAGE_BYTES_DROPPED.metricName();
    static final String BYTES_PUNCHED = Ticker.BYTES_PUNCHED.metricName();
    /**
     * The engine gauges of what holds old versions of its file set, per engine: how long the oldest held
     * version has been held (µs), the bytes of files only held versions keep, the iterators and the
     * checkpoint copies open.
     */
    static final String OLDEST_HELD_VERSION_AGE_US = Ticker.OLDEST_HELD_VERSION_AGE_US.metricName();
    static final String OBSOLETE_FILE_BYTES_HELD = Ticker.OBSOLETE_FILE_BYTES_HELD.metricName();
    static final String OPEN_ITERATORS = Ticker.OPEN_ITERATORS.metricName();
    static final String OPEN_CHECKPOINTS = Ticker.OPEN_CHECKPOINTS.metricName();
    /** The engine gauges of the compaction running now, per engine: how long it has run (µs), its input bytes. */
    static final String RUNNING_COMPACTION_AGE_US = Ticker.RUNNING_COMPACTION_AGE_US.metricName();
    static final String RUNNING_COMPACTION_INPUT_BYTES = Ticker.RUNNING_COMPACTION_INPUT_BYTES.metricName();
    /**
     * The engines' counters of their flushes, summed: the checkpoints that switched the memtables to files as
     * they began and linked the flushed files instead of copying the memtables, and how long they waited for
     * theirs; the flushes, the bytes they wrote, how long they ran and how long switched memtables waited
     * for the flush thread to start them; the heap trims (which the flush and compaction threads run) and
     * how long they took; how long compactions paused for a flush a checkpoint or a Flush call waited for.
     * Times in µs; zeros on other backends.
     */
    record FlushWork(Map<Ticker, Long> counts) {
        private static final List<Ticker> TICKERS = List.of(Ticker.CHECKPOINT_FLUSHES,
                Ticker.CHECKPOINT_FLUSH_WAIT_MICROS, Ticker.FLUSHES, Ticker.BYTES_WRITTEN_FLUSH, Ticker.FLUSH_MICROS,
                Ticker.FLUSH_DELAY_MICROS, Ticker.HEAP_TRIMS, Ticker.HEAP_TRIM_MICROS,
                Ticker.COMPACTION_GIVE_WAY_MICROS);

        static FlushWork now() {
            Map<Ticker, Long> counts = new EnumMap<>(Ticker.class);
            TICKERS.forEach(t -> counts.put(t, sum(ENGINE, t.metricName())));
            return new FlushWork(counts);
        }

        /** What was counted since {@code start}. */
        FlushWork since(FlushWork start) {
            Map<Ticker, Long> counts = new EnumMap<>(Ticker.class);
            TICKERS.forEach(t -> counts.put(t, get(t) - start.get(t)));
            return new FlushWork(counts);
        }

        /** One of the counters above. */
        long get(Ticker t) {
            return counts.getOrDefault(t, 0L);
        }
    }

    private static final Map<String, Gauge<?>> GAUGES = new ConcurrentHashMap<>();

    /** Registers this reporter in a cluster's configuration. */
    static void configure(org.apache.flink.configuration.Configuration conf) {
        conf.setString("metrics.reporter.lethe-gauges.factory.class", Factory.class.getName());
    }

    /** The sum of the gauge {@code name} of {@code group} over the operators registered now. */
    static long sum(String group, String name) {
        return values(group, name).sum();
    }

    /** The largest value of the gauge {@code name} of {@code group} over the operators registered now (0: none). */
    static long max(String group, String name) {
        return values(group, name).max().orElse(0);
    }

    /**
     * What the engines' memory budget holds now (the largest over the engines registered, which share the
     * slot's budget); 0 without Lethe engines.
     */
    static long budgetHeldBytes() {
        return BUDGET_HOLDINGS.stream().mapToLong(name -> max(ENGINE, name)).sum();
    }

    private static LongStream values(String group, String name) {
        String suffix = "." + group + "." + name;
        return GAUGES.entrySet().stream()
                .filter(e -> e.getKey().endsWith(suffix))
                .map(e -> e.getValue().getValue())
                .filter(Number.class::isInstance)
                .mapToLong(v -> ((Number) v).longValue());
    }

    /**
     * Watches the executor's counts of batches and requests while a job runs, polling every 100 ms, so that
     * what they reached is known after the job ended and its gauges left. Closing it stops the polling.
     */
    static final class Watch implements AutoCloseable {
        private final Thread poller;
        private volatile boolean stopped;
        private volatile long batches;
        private volatile long requests;

        Watch() {
            poller = new Thread(this::poll, "async-executor-gauges");
            poller.setDaemon(true);
            poller.start();
        }

        private void poll() {
            while (!stopped) {
                batches = Math.max(batches, sum(EXECUTOR, "batches"));
                requests = Math.max(requests, sum(EXECUTOR, "requests"));
                try {
                    Thread.sleep(100);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }

        /** Requests per batch the executor was handed; NaN when it served none (another backend). */
        double requestsPerBatch() {
            return batches == 0 ? Double.NaN : (double) requests / batches;
        }

        @Override
        public void close() throws InterruptedException {
            stopped = true;
            poller.join();
        }
    }

    @Override
    public void open(MetricConfig config) {}

    @Override
    public void close() {}

    @Override
    public void notifyOfAddedMetric(Metric metric, String name, MetricGroup group) {
        String id = group.getMetricIdentifier(name);
        boolean kept = id.contains("." + EXECUTOR + ".") || id.contains("." + ENGINE + ".");
        if (metric instanceof Gauge<?> gauge && kept) {
            GAUGES.put(id, gauge);
        }
    }

    @Override
    public void notifyOfRemovedMetric(Metric metric, String name, MetricGroup group) {
        GAUGES.remove(group.getMetricIdentifier(name));
    }

    /** Found by Flink through the service loader, and chosen by its class name. */
    public static final class Factory implements MetricReporterFactory {
        @Override
        public MetricReporter createMetricReporter(Properties properties) {
            return new BackendGauges();
        }
    }
}
