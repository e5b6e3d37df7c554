package io.lethe.bench.jobs;

import org.HdrHistogram.Histogram;
import org.apache.flink.api.common.accumulators.Accumulator;

/**
 * Latencies in microseconds, recorded into an HdrHistogram (1 µs to 10 min, 3 significant digits) by
 * the operator that sees each result, and merged over subtasks by Flink's accumulators.
 */
final class LatencyAccumulator implements Accumulator<Long, Histogram> {
    private static final long serialVersionUID = 1L;
    private static final long MAX_MICROS = 600_000_000L;

    private Histogram histogram = new Histogram(MAX_MICROS, 3);

    @Override
    public void add(Long micros) {
        histogram.recordValue(Math.max(1, Math.min(MAX_MICROS, micros)));
    }

    @Override
    public Histogram getLocalValue() {
        return histogram;
    }

    @Override
    public void resetLocal() {
        histogram.reset();
    }

    @Override
    public void merge(Accumulator<Long, Histogram> other) {
        histogram.add(other.getLocalValue());
    }

    @Override
    public LatencyAccumulator clone() {
        LatencyAccumulator copy = new LatencyAccumulator();
        copy.histogram = histogram.copy();
        return copy;
    }
}
