package io.lethe.flink;

import io.lethe.flink.testing.TestJobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.java.tuple.Tuple3;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.windowing.assigners.EventTimeSessionWindows;
import org.apache.flink.streaming.api.windowing.assigners.SlidingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.util.CloseableIterator;
import org.apache.flink.util.Collector;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

/**
 * Jobs on a MiniCluster: every job's output on Lethe equals its output on Flink's HashMap
 * backend, also when a task fails mid-run and the job recovers from a checkpoint.
 */
class LetheJobsTest {
    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER = new MiniClusterExtension(
            new MiniClusterResourceConfiguration.Builder().setNumberTaskManagers(1).setNumberSlotsPerTaskManager(4).build());

    /**
     * Paces the input (it runs chained to the source, so no records pile up in network buffers and
     * checkpoint barriers pass quickly) and fails once, in the first attempt, as soon as two
     * checkpoints completed after an eighth of the input, so that recovery restores real (with
     * incremental checkpoints: incremental) state. Past that eighth it waits for the checkpoints by
     * slowing down (a millisecond per record; blocking would stall the checkpoints too), so a slow
     * machine cannot finish the input before the failure.
     */
    static final class FailOnce extends RichMapFunction<Tuple3<Integer, Long, Long>, Tuple3<Integer, Long, Long>>
            implements CheckpointListener {
        static final AtomicBoolean FAILED = new AtomicBoolean();
        static final AtomicLong COMPLETED_CHECKPOINT = new AtomicLong();
        private final boolean enabled;
        private int seen;

        FailOnce(boolean enabled) {
            this.enabled = enabled;
        }

        @Override
        public Tuple3<Integer, Long, Long> map(Tuple3<Integer, Long, Long> value) throws Exception {
            if (++seen % 40 == 0) {
                Thread.sleep(1);  // about a second per run: several checkpoints at 100 ms
            }
            if (enabled && seen >= TestJobs.RECORDS / 8 && !FAILED.get()) {
                if (COMPLETED_CHECKPOINT.get() < 2) {
                    Thread.sleep(1);  // not yet: give the checkpoints time (up to ~20 s)
                } else if (FAILED.compareAndSet(false, true)) {
                    throw new RuntimeException("injected failure");
                }
            }
            return value;
        }

        @Override
        public void notifyCheckpointComplete(long checkpointId) {
            COMPLETED_CHECKPOINT.accumulateAndGet(checkpointId, Math::max);
        }
    }

    static List<String> run(String backend, boolean incremental, boolean injectFailure,
            Function<DataStream<Tuple3<Integer, Long, Long>>, DataStream<String>> job) throws Exception {
        return run(backend, incremental, injectFailure, new Configuration(), job);
    }

    /** As above, with {@code settings} added to the job's configuration. */
    static List<String> run(String backend, boolean incremental, boolean injectFailure, Configuration settings,
            Function<DataStream<Tuple3<Integer, Long, Long>>, DataStream<String>> job) throws Exception {
        Configuration conf = new Configuration(settings);
        conf.set(StateBackendOptions.STATE_BACKEND, backend);
        conf.set(CheckpointingOptions.INCREMENTAL_CHECKPOINTS, incremental);
        conf.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, Duration.ofMillis(100));
        conf.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
        conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, 3);
        conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ofMillis(100));
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(2);
        env.setRuntimeMode(RuntimeExecutionMode.STREAMING);
        FailOnce.FAILED.set(false);
        FailOnce.COMPLETED_CHECKPOINT.set(0);
        DataStream<Tuple3<Integer, Long, Long>> input = env.fromData(TestJobs.events())
                .map(new FailOnce(injectFailure))
                .setParallelism(1)
                .assignTimestampsAndWatermarks(TestJobs.watermarks());
        List<String> out = new ArrayList<>();
        try (CloseableIterator<String> it = job.apply(input).executeAndCollect()) {
            it.forEachRemaining(out::add);
        }
        if (injectFailure) {
            assertTrue(FailOnce.FAILED.get(), "the failure was not injected");
        }
        Collections.sort(out);
        return out;
    }

    private static void assertSameOnLethe(Function<DataStream<Tuple3<Integer, Long, Long>>, DataStream<String>> job)
            throws Exception {
        List<String> expected = run("hashmap", false, false, job);
        assertTrue(expected.size() > 10, "the job produced too little output to compare: " + expected.size());
        String lethe = LetheStateBackendFactory.class.getName();
        assertSameOutput(expected, run(lethe, false, false, job), "Lethe");
        assertSameOutput(expected, run(lethe, false, true, job), "Lethe after an injected failure");
        assertSameOutput(expected, run(lethe, true, true, job),
                "Lethe with incremental checkpoints after an injected failure");
    }

    /** Equal multisets of output lines; on a difference, says briefly what differs. */
    static void assertSameOutput(List<String> expected, List<String> actual, String what) {
        if (expected.equals(actual)) {
            return;
        }
        List<String> missing = new ArrayList<>(expected);
        actual.forEach(missing::remove);
        List<String> extra = new ArrayList<>(actual);
        expected.forEach(extra::remove);
        throw new AssertionError(what + " output differs from the HashMap backend's: " + expected.size() + " vs "
                + actual.size() + " lines; missing " + missing.subList(0, Math.min(10, missing.size()))
                + ", unexpected " + extra.subList(0, Math.min(10, extra.size())));
    }

    @Test
    void keyedRunningAggregation() throws Exception {
        assertSameOnLethe(in -> in.keyBy(e -> e.f0)
                .reduce((a, b) -> Tuple3.of(a.f0, Math.max(a.f1, b.f1), a.f2 + b.f2))
                .map(t -> t.f0 + ":" + t.f2));
    }

    @Test
    void tumblingEventTimeWindows() throws Exception {
        assertSameOnLethe(in -> in.keyBy(e -> e.f0)
                .window(TumblingEventTimeWindows.of(Duration.ofSeconds(1)))
                .reduce((a, b) -> Tuple3.of(a.f0, Math.min(a.f1, b.f1), a.f2 + b.f2))
                .map(t -> t.f0 + ":" + (t.f1 / 1000) + ":" + t.f2));
    }

    @Test
    void slidingEventTimeWindows() throws Exception {
        assertSameOnLethe(in -> in.keyBy(e -> e.f0)
                .window(SlidingEventTimeWindows.of(Duration.ofSeconds(2), Duration.ofMillis(500)))
                .aggregate(new TestJobs.CountAndSum(), new WindowLabel()));
    }

    @Test
    void sessionWindows() throws Exception {
        assertSameOnLethe(in -> in.keyBy(e -> e.f0)
                .window(EventTimeSessionWindows.withGap(Duration.ofMillis(150)))
                .process(new org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction<
                        Tuple3<Integer, Long, Long>, String, Integer,
                        org.apache.flink.streaming.api.windowing.windows.TimeWindow>() {
                    @Override
                    public void process(Integer key, Context ctx, Iterable<Tuple3<Integer, Long, Long>> elements,
                            Collector<String> out) {
                        long sum = 0;
                        int n = 0;
                        for (Tuple3<Integer, Long, Long> e : elements) {
                            sum += e.f2;
                            n++;
                        }
                        out.collect(key + ":" + ctx.window().getStart() + "-" + ctx.window().getEnd() + ":" + n + ":" + sum);
                    }
                }));
    }

    @Test
    void keyedProcessFunctionWithTimersAndMapState() throws Exception {
        assertSameOnLethe(in -> in.keyBy(e -> e.f0).process(new BucketTimers()));
    }

    /** Prefixes a window's aggregate with its key and start. */
    static final class WindowLabel implements org.apache.flink.streaming.api.functions.windowing.WindowFunction<
            String, String, Integer, org.apache.flink.streaming.api.windowing.windows.TimeWindow> {
        @Override
        public void apply(Integer key, org.apache.flink.streaming.api.windowing.windows.TimeWindow window,
                Iterable<String> results, Collector<String> out) {
            out.collect(key + ":" + window.getStart() + ":" + results.iterator().next());
        }
    }

    /** Counts values per 250 ms bucket in map state; an event-time timer emits and clears a bucket. */
    static final class BucketTimers extends KeyedProcessFunction<Integer, Tuple3<Integer, Long, Long>, String> {
        private transient MapState<Long, Long> buckets;

        @Override
        public void open(org.apache.flink.api.common.functions.OpenContext ctx) {
            buckets = getRuntimeContext().getMapState(new MapStateDescriptor<>("buckets", Long.class, Long.class));
        }

        @Override
        public void processElement(Tuple3<Integer, Long, Long> e, Context ctx, Collector<String> out) throws Exception {
            long bucket = e.f1 / 250;
            Long old = buckets.get(bucket);
            buckets.put(bucket, (old == null ? 0 : old) + e.f2);
            ctx.timerService().registerEventTimeTimer(bucket * 250 + 249);
        }

        @Override
        public void onTimer(long timestamp, OnTimerContext ctx, Collector<String> out) throws Exception {
            long bucket = timestamp / 250;
            Long sum = buckets.get(bucket);
            // Buckets at or before this one: earlier timers removed theirs and no element is late,
            // so this is 1 on any backend (how many later buckets are open depends on timing).
            int upToHere = 0;
            for (Long b : buckets.keys()) {
                if (b <= bucket) {
                    upToHere++;
                }
            }
            out.collect(ctx.getCurrentKey() + ":" + bucket + ":" + sum + ":" + upToHere);
            buckets.remove(bucket);
        }
    }
}
