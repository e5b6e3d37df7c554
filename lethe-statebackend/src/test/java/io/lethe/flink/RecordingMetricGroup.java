package io.lethe.flink;

import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.Metric;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;

import java.util.Map;

/** A metric group that records every gauge registered in it or its subgroups, by dotted name (tests). */
public final class RecordingMetricGroup extends UnregisteredMetricsGroup {
    private final Map<String, Metric> metrics;
    private final String prefix;

    public RecordingMetricGroup(String prefix, Map<String, Metric> metrics) {
        this.prefix = prefix;
        this.metrics = metrics;
    }

    @Override
    public MetricGroup addGroup(String name) {
        return new RecordingMetricGroup(prefix + name + ".", metrics);
    }

    @Override
    public <T, G extends Gauge<T>> G gauge(String name, G gauge) {
        metrics.put(prefix + name, gauge);
        return gauge;
    }
}
