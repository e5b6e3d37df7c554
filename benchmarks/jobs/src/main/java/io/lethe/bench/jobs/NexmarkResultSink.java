package io.lethe.bench.jobs;

import org.apache.flink.api.common.accumulators.ListAccumulator;
import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.streaming.api.functions.sink.legacy.RichSinkFunction;
import org.apache.flink.types.Row;

/**
 * Folds a query's changelog into a {@link NexmarkMultiset} and, when the input has ended, reports its
 * fingerprint through an accumulator; in a paced run also each result row's latency ({@link
 * NexmarkLatency}). Run it with parallelism 1: it sees the whole result. Its multiset is not
 * checkpointed, so the benchmark runs without restarts: a failure fails the run.
 */
final class NexmarkResultSink extends RichSinkFunction<Row> {
    static final String FINGERPRINT = "nexmark-result";
    static final String CHANGES = "nexmark-changes";
    static final String LATENCY = "nexmark-latency";

    private final NexmarkLatency latencyOf;
    private transient NexmarkMultiset result;
    private transient ListAccumulator<String> fingerprint;
    private transient LongCounter changes;
    private transient LatencyAccumulator latency;

    /** @param latencyOf measures each row's latency; null: none (an unpaced run) */
    NexmarkResultSink(NexmarkLatency latencyOf) {
        this.latencyOf = latencyOf;
    }

    @Override
    public void open(OpenContext context) {
        result = new NexmarkMultiset();
        fingerprint = new ListAccumulator<>();
        changes = new LongCounter();
        getRuntimeContext().addAccumulator(FINGERPRINT, fingerprint);
        getRuntimeContext().addAccumulator(CHANGES, changes);
        if (latencyOf != null) {
            latency = new LatencyAccumulator();
            getRuntimeContext().addAccumulator(LATENCY, latency);
        }
    }

    @Override
    public void invoke(Row row, Context context) {
        if (latency != null) {
            long micros = latencyOf.micros(row, System.nanoTime());
            if (micros != NexmarkLatency.NOT_COUNTED) {
                latency.add(micros);
            }
        }
        result.apply(row);
    }

    @Override
    public void finish() {
        fingerprint.add(result.fingerprint().toString());
        changes.add(result.changes());
    }
}
