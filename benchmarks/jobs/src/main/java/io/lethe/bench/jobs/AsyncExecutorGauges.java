package io.lethe.bench.jobs;

import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.Metric;
import org.apache.flink.metrics.MetricConfig;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.reporter.MetricReporter;
import org.apache.flink.metrics.reporter.MetricReporterFactory;

import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A metric reporter that keeps the gauges of Lethe's asynchronous executor ({@code <operator>.lethe-async.*})
 * while they are registered, so that a run in this JVM can read how many requests Flink's controller
 * handed the executor per batch. Registered with {@link #configure}; other backends have no such gauges,
 * and their sums read 0.
 */
public final class AsyncExecutorGauges implements MetricReporter {
    private static final String GROUP = "lethe-async";
    private static final Map<String, Gauge<?>> GAUGES = new ConcurrentHashMap<>();

    /** Registers this reporter in a cluster's configuration. */
    static void configure(org.apache.flink.configuration.Configuration conf) {
        conf.setString("metrics.reporter.lethe-async.factory.class", Factory.class.getName());
    }

    /** The sum of the gauge {@code name} ({@code batches}, {@code requests}, ...) over the executors registered now. */
    static long sum(String name) {
        long sum = 0;
        for (Map.Entry<String, Gauge<?>> e : GAUGES.entrySet()) {
            if (e.getKey().endsWith(GROUP + "." + name) && e.getValue().getValue() instanceof Number n) {
                sum += n.longValue();
            }
        }
        return sum;
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
                batches = Math.max(batches, sum("batches"));
                requests = Math.max(requests, sum("requests"));
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
        if (metric instanceof Gauge<?> gauge && id.contains(GROUP + ".")) {
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
            return new AsyncExecutorGauges();
        }
    }
}
