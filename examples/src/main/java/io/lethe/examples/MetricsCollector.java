package io.lethe.examples;

import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.Metric;
import org.apache.flink.metrics.MetricConfig;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.reporter.MetricReporter;
import org.apache.flink.metrics.reporter.MetricReporterFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A metric reporter for runs inside this JVM (a MiniCluster): it keeps every metric registered so
 * that {@link LocalRun} can print progress and a report. A removed metric keeps its last value
 * (operators remove theirs when a bounded job finishes). Register with {@code
 * metrics.reporter.<name>.factory.class: io.lethe.examples.MetricsCollector$Factory}.
 *
 * <p>Thread-safe.
 */
public final class MetricsCollector implements MetricReporter {
    /** Every metric seen since the last {@link #reset}, by its full identifier. */
    private static final Map<String, Entry> METRICS = new ConcurrentHashMap<>();

    /** One metric: its name (the last component) and the live object or its last value. */
    record Entry(String name, Metric metric, Object lastValue) {
        Object value() {
            if (lastValue != null) {
                return lastValue;
            }
            return valueOf(metric);
        }
    }

    /** Forgets every metric (between runs in one JVM). */
    public static void reset() {
        METRICS.clear();
    }

    /** The sum over all metrics named {@code name} with a numeric value (subtasks, operators). */
    public static long sum(String name) {
        long s = 0;
        for (Entry e : METRICS.values()) {
            if (e.name().equals(name) && e.value() instanceof Number n) {
                s += n.longValue();
            }
        }
        return s;
    }

    /** The largest value of the metrics named {@code name}, or 0. */
    public static long max(String name) {
        long m = 0;
        for (Entry e : METRICS.values()) {
            if (e.name().equals(name) && e.value() instanceof Number n) {
                m = Math.max(m, n.longValue());
            }
        }
        return m;
    }

    /**
     * Text values of the metrics under a group path (e.g. {@code .lethe.expiry.}), labelled by what
     * follows it in their identifier; sorted, without repeats (subtasks report the same).
     */
    public static List<String> strings(String groupPath) {
        List<String> out = new ArrayList<>();
        METRICS.forEach((identifier, e) -> {
            int at = identifier.indexOf(groupPath);
            if (at >= 0 && e.value() instanceof String s) {
                String line = identifier.substring(at + groupPath.length()) + ": " + s;
                if (!out.contains(line)) {
                    out.add(line);
                }
            }
        });
        out.sort(null);
        return out;
    }

    @Override
    public void open(MetricConfig config) {}

    @Override
    public void close() {}

    @Override
    public void notifyOfAddedMetric(Metric metric, String metricName, MetricGroup group) {
        METRICS.put(group.getMetricIdentifier(metricName), new Entry(metricName, metric, null));
    }

    @Override
    public void notifyOfRemovedMetric(Metric metric, String metricName, MetricGroup group) {
        Object last = valueOf(metric);
        if (last != null) {
            METRICS.put(group.getMetricIdentifier(metricName), new Entry(metricName, metric, last));
        }
    }

    private static Object valueOf(Metric metric) {
        try {
            if (metric instanceof Counter c) {
                return c.getCount();
            }
            if (metric instanceof Gauge<?> g) {
                return g.getValue();
            }
        } catch (RuntimeException e) {
            // A gauge of a closed operator: no value.
        }
        return null;
    }

    /** Creates the reporter (Flink instantiates it from the configuration). */
    public static final class Factory implements MetricReporterFactory {
        @Override
        public MetricReporter createMetricReporter(Properties properties) {
            return new MetricsCollector();
        }
    }
}
