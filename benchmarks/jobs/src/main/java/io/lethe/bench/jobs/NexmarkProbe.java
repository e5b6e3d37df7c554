package io.lethe.bench.jobs;

import org.apache.flink.api.common.accumulators.LongMaximum;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.types.Row;

/**
 * Notes when the events at 10 % and 90 % of the input enter the job ({@link System#nanoTime}: the
 * MiniCluster runs in this JVM). It is chained to the source, which backpressure slows to the query's
 * pace, so the events between the two marks over the time between them give the steady-state rate:
 * without the job's start, and without its end, when windows fire, mini-batches flush and the final
 * checkpoint is taken.
 */
final class NexmarkProbe extends RichMapFunction<Row, Row> {
    static final String AT_10 = "nexmark-at-10-percent-ns";
    static final String AT_90 = "nexmark-at-90-percent-ns";

    private final long events;
    private transient LongMaximum at10;
    private transient LongMaximum at90;
    private transient long seen;

    NexmarkProbe(long events) {
        this.events = events;
    }

    @Override
    public void open(OpenContext context) {
        at10 = new LongMaximum();
        at90 = new LongMaximum();
        getRuntimeContext().addAccumulator(AT_10, at10);
        getRuntimeContext().addAccumulator(AT_90, at90);
    }

    @Override
    public Row map(Row event) {
        seen++;
        if (seen == events / 10) {
            at10.add(System.nanoTime());
        } else if (seen == events * 9 / 10) {
            at90.add(System.nanoTime());
        }
        return event;
    }

    /** The events in the steady part of the run: those from the 10 % mark to the 90 % mark. */
    static long steadyEvents(long events) {
        return events * 9 / 10 - events / 10;
    }
}
