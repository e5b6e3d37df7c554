package io.lethe.flink.async;

import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.MetricGroup;

/**
 * The asynchronous executor's counts as gauges under the backend's metric group ({@code
 * <operator>.lethe-async.*}): batches and the requests in them (their ratio is the batch size
 * Flink's execution controller hands over), batches handed to the request pipeline's thread and
 * those in flight, multi-gets and their reads, write batches and their entries.
 */
final class ExecutorMetrics {
    static final String GROUP = "lethe-async";

    private ExecutorMetrics() {}

    static void register(MetricGroup parent, BatchCounts counts, RequestPipeline pipeline) {
        MetricGroup g = parent.addGroup(GROUP);
        g.gauge("batches", (Gauge<Long>) counts::batches);
        g.gauge("requests", (Gauge<Long>) counts::requests);
        g.gauge("batches-handed-over", (Gauge<Long>) counts::handedOverBatches);
        g.gauge("batches-in-flight", (Gauge<Integer>) pipeline::inFlight);
        g.gauge("multi-gets", (Gauge<Long>) counts::lookups);
        g.gauge("multi-get-reads", (Gauge<Long>) counts::reads);
        g.gauge("write-batches", (Gauge<Long>) counts::writes);
        g.gauge("write-batch-entries", (Gauge<Long>) counts::entries);
    }
}
