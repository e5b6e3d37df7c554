package io.lethe.bench.jobs;

import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.api.common.accumulators.LongMaximum;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;

/**
 * Notes when the elements at 10 % and 90 % of the input enter the job ({@link System#nanoTime}: the
 * MiniCluster runs in this JVM). It is chained to the source, which backpressure slows to the job's
 * pace, so the elements between the two marks over the time between them give the steady-state rate:
 * without the job's start, and without its end, when windows fire, buffers flush and the final
 * checkpoint is taken.
 *
 * @param <T> the elements, passed through unchanged
 */
final class SteadyProbe<T> extends RichMapFunction<T, T> {
    static final String AT_10 = "at-10-percent-ns";
    static final String AT_90 = "at-90-percent-ns";

    private final long elements;
    private transient LongMaximum at10;
    private transient LongMaximum at90;
    private transient long seen;

    SteadyProbe(long elements) {
        this.elements = elements;
    }

    @Override
    public void open(OpenContext context) {
        at10 = new LongMaximum();
        at90 = new LongMaximum();
        getRuntimeContext().addAccumulator(AT_10, at10);
        getRuntimeContext().addAccumulator(AT_90, at90);
    }

    @Override
    public T map(T element) {
        seen++;
        if (seen == elements / 10) {
            at10.add(System.nanoTime());
        } else if (seen == elements * 9 / 10) {
            at90.add(System.nanoTime());
        }
        return element;
    }

    /** The elements in the steady part of the run: those from the 10 % mark to the 90 % mark. */
    static long steadyElements(long elements) {
        return elements * 9 / 10 - elements / 10;
    }

    /** How long the steady part of a finished job took, in nanoseconds; 0 when a mark was never reached. */
    static long steadyNanos(JobExecutionResult result) {
        Long at10 = result.getAccumulatorResult(AT_10);
        Long at90 = result.getAccumulatorResult(AT_90);
        return at10 == null || at90 == null ? 0 : at90 - at10;
    }
}
