package io.lethe.it;

import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.Histogram;
import org.apache.flink.metrics.Meter;
import org.apache.flink.metrics.Metric;
import org.apache.flink.metrics.MetricConfig;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.reporter.MetricReporter;
import org.apache.flink.metrics.reporter.MetricReporterFactory;
import org.apache.flink.metrics.reporter.Scheduled;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

/**
 * A metric reporter that writes every metric it was given to the process's log at each report
 * interval, one line per metric: {@code metric <identifier> = <value>}, the identifier being the
 * metric's full scope with {@code .} between components, e.g. {@code
 * localhost.taskmanager.tm-1.<job>.<operator>.0.lethe.expiry.window-contents}. Tests of a cluster of
 * processes read the processes' log files to see what the backend reported.
 *
 * <p>It plays the part of Flink's slf4j reporter, which a distribution ships in {@code plugins/} but
 * which is not available from the Maven repository this build uses. Register it with {@code
 * metrics.reporter.<name>.factory.class: io.lethe.it.LogReporter$Factory}, {@code
 * metrics.reporter.<name>.interval} and, to keep the log short, Flink's own {@code
 * metrics.reporter.<name>.filter.includes}.
 *
 * <p>Thread-safe: Flink adds and removes metrics from task threads while the reporter's thread
 * reports.
 */
public final class LogReporter implements MetricReporter, Scheduled {
    private static final Logger LOG = LoggerFactory.getLogger(LogReporter.class);

    /** Registered metrics by identifier, sorted so that one operator's metrics stay together. */
    private final Map<String, Metric> metrics = new TreeMap<>();

    @Override
    public void open(MetricConfig config) {}

    @Override
    public void close() {}

    @Override
    public synchronized void notifyOfAddedMetric(Metric metric, String metricName, MetricGroup group) {
        metrics.put(group.getMetricIdentifier(metricName), metric);
    }

    @Override
    public synchronized void notifyOfRemovedMetric(Metric metric, String metricName, MetricGroup group) {
        metrics.remove(group.getMetricIdentifier(metricName));
    }

    @Override
    public synchronized void report() {
        metrics.forEach((identifier, metric) -> LOG.info("metric {} = {}", identifier, valueOf(metric)));
    }

    private static Object valueOf(Metric metric) {
        try {
            if (metric instanceof Gauge<?> g) {
                return g.getValue();
            }
            if (metric instanceof Counter c) {
                return c.getCount();
            }
            if (metric instanceof Meter m) {
                return m.getRate() + "/s (" + m.getCount() + ")";
            }
            if (metric instanceof Histogram h) {
                return "count " + h.getCount() + ", p50 " + h.getStatistics().getQuantile(0.5) + ", max "
                        + h.getStatistics().getMax();
            }
            return metric.getClass().getSimpleName();
        } catch (RuntimeException e) {
            // A gauge whose operator is closing: the line says so instead of ending the report.
            return "unavailable (" + e + ")";
        }
    }

    /** Creates the reporter (Flink instantiates it from the configuration). */
    public static final class Factory implements MetricReporterFactory {
        @Override
        public MetricReporter createMetricReporter(Properties properties) {
            return new LogReporter();
        }
    }
}
