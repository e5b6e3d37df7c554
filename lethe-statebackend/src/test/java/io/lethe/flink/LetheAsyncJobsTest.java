package io.lethe.flink;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lethe.flink.testing.TestJobs;

import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ReducingState;
import org.apache.flink.api.common.state.ReducingStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.java.tuple.Tuple3;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.windowing.assigners.SlidingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.util.Collector;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * Jobs with asynchronous state ({@code enableAsyncState()}, Flink's State V2) on Lethe give exactly
 * the output of the same logic with synchronous state on Flink's HashMap backend, also when a task
 * fails mid-run and the job recovers from a (full or incremental) checkpoint: through Flink's
 * synchronous adaptor (the default) and through Lethe's own executor, also with every batch served
 * off the task thread. (Flink's asynchronous
 * window operator has no merging windows, such as sessions, in this version.)
 */
class LetheAsyncJobsTest {
    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER = new MiniClusterExtension(
            new MiniClusterResourceConfiguration.Builder().setNumberTaskManagers(1).setNumberSlotsPerTaskManager(4).build());

    /**
     * The asynchronous job on Lethe (with Flink's synchronous adaptor, the default, and with Lethe's
     * executor when {@code executor}) against the synchronous job on the HashMap backend.
     */
    private static void assertSameWithAsyncState(boolean executor,
            Function<DataStream<Tuple3<Integer, Long, Long>>, DataStream<String>> sync,
            Function<DataStream<Tuple3<Integer, Long, Long>>, DataStream<String>> async) throws Exception {
        List<String> expected = LetheJobsTest.run("hashmap", false, false, sync);
        assertTrue(expected.size() > 10, "the job produced too little output to compare: " + expected.size());
        String lethe = LetheStateBackendFactory.class.getName();
        Configuration adaptor = new Configuration();
        LetheJobsTest.assertSameOutput(expected, LetheJobsTest.run(lethe, false, true, adaptor, async),
                "Lethe, async state through Flink's adaptor, after an injected failure");
        if (!executor) {
            return;
        }
        Configuration batched = new Configuration();
        batched.set(LetheOptions.ASYNC_STATE_EXECUTOR, true);
        LetheJobsTest.assertSameOutput(expected, LetheJobsTest.run(lethe, false, false, batched, async),
                "Lethe's async state executor");
        LetheJobsTest.assertSameOutput(expected, LetheJobsTest.run(lethe, false, true, batched, async),
                "Lethe's async state executor after an injected failure");
        LetheJobsTest.assertSameOutput(expected, LetheJobsTest.run(lethe, true, true, batched, async),
                "Lethe's async state executor, incremental checkpoints, after an injected failure");
        Configuration offTaskThread = new Configuration(batched);
        offTaskThread.set(LetheOptions.ASYNC_STATE_INLINE_BATCH_SIZE, 0);
        LetheJobsTest.assertSameOutput(expected, LetheJobsTest.run(lethe, true, true, offTaskThread, async),
                "Lethe's async state executor, every batch served off the task thread, incremental checkpoints,"
                        + " after an injected failure");
    }

    @Test
    void tumblingWindowsReduce() throws Exception {
        assertSameWithAsyncState(true,
                in -> tumbling(in.keyBy(e -> e.f0).window(TumblingEventTimeWindows.of(Duration.ofSeconds(1)))
                        .reduce(LetheAsyncJobsTest::minTimeSumValue)),
                in -> tumbling(in.keyBy(e -> e.f0).window(TumblingEventTimeWindows.of(Duration.ofSeconds(1)))
                        .enableAsyncState().reduce(LetheAsyncJobsTest::minTimeSumValue)));
    }

    /**
     * Through Flink's adaptor only: with requests served in batches, Flink's asynchronous window
     * operator registers an element's timers for the last of its overlapping windows (it reads the
     * window from a per-record variable when a result comes back), and windows go missing.
     */
    @Test
    void slidingWindowsAggregate() throws Exception {
        assertSameWithAsyncState(false,
                in -> in.keyBy(e -> e.f0).window(SlidingEventTimeWindows.of(Duration.ofSeconds(2), Duration.ofMillis(500)))
                        .aggregate(new TestJobs.CountAndSum(), new LetheJobsTest.WindowLabel()),
                in -> in.keyBy(e -> e.f0).window(SlidingEventTimeWindows.of(Duration.ofSeconds(2), Duration.ofMillis(500)))
                        .enableAsyncState().aggregate(new TestJobs.CountAndSum(), new LetheJobsTest.WindowLabel()));
    }

    /** Map state read, written and iterated through futures; event-time timers. */
    @Test
    void keyedProcessFunctionWithTimersAndMapState() throws Exception {
        assertSameWithAsyncState(true, in -> in.keyBy(e -> e.f0).process(new LetheJobsTest.BucketTimers()),
                in -> in.keyBy(e -> e.f0).enableAsyncState().process(new AsyncBucketTimers()));
    }

    /** Value, list, reducing and map state through the blocking calls of asynchronous state. */
    @Test
    void everyStateKindThroughBlockingCalls() throws Exception {
        assertSameWithAsyncState(true, in -> in.keyBy(e -> e.f0).process(new EveryKindSync()),
                in -> in.keyBy(e -> e.f0).enableAsyncState().process(new EveryKindAsync()));
    }

    private static Tuple3<Integer, Long, Long> minTimeSumValue(Tuple3<Integer, Long, Long> a, Tuple3<Integer, Long, Long> b) {
        return Tuple3.of(a.f0, Math.min(a.f1, b.f1), a.f2 + b.f2);
    }

    private static DataStream<String> tumbling(DataStream<Tuple3<Integer, Long, Long>> windows) {
        return windows.map(t -> t.f0 + ":" + (t.f1 / 1000) + ":" + t.f2);
    }

    /** {@link LetheJobsTest.BucketTimers} with asynchronous map state, each step chained on the previous. */
    static final class AsyncBucketTimers extends KeyedProcessFunction<Integer, Tuple3<Integer, Long, Long>, String> {
        private transient org.apache.flink.api.common.state.v2.MapState<Long, Long> buckets;

        @Override
        public void open(OpenContext ctx) {
            buckets = getRuntimeContext().getMapState(
                    new org.apache.flink.api.common.state.v2.MapStateDescriptor<>("buckets", Long.class, Long.class));
        }

        @Override
        public void processElement(Tuple3<Integer, Long, Long> e, Context ctx, Collector<String> out) {
            long bucket = e.f1 / 250;
            buckets.asyncGet(bucket).thenAccept(old -> buckets.asyncPut(bucket, (old == null ? 0 : old) + e.f2));
            ctx.timerService().registerEventTimeTimer(bucket * 250 + 249);
        }

        @Override
        public void onTimer(long timestamp, OnTimerContext ctx, Collector<String> out) {
            long bucket = timestamp / 250;
            Integer key = ctx.getCurrentKey();
            int[] upToHere = {0};
            buckets.asyncGet(bucket).thenCompose(sum -> buckets.asyncKeys()
                    .thenCompose(keys -> keys.onNext(b -> {
                        if (b <= bucket) {
                            upToHere[0]++;
                        }
                    }))
                    .thenCompose(done -> {
                        out.collect(key + ":" + bucket + ":" + sum + ":" + upToHere[0]);
                        return buckets.asyncRemove(bucket);
                    }));
        }
    }

    /** Per element: how many so far, their sum, the last three values, and distinct values seen (synchronous state). */
    static final class EveryKindSync extends KeyedProcessFunction<Integer, Tuple3<Integer, Long, Long>, String> {
        private transient ValueState<Long> count;
        private transient ReducingState<Long> sum;
        private transient ListState<Long> recent;
        private transient MapState<Long, Boolean> seen;

        @Override
        public void open(OpenContext ctx) {
            count = getRuntimeContext().getState(new ValueStateDescriptor<>("count", Long.class));
            sum = getRuntimeContext().getReducingState(new ReducingStateDescriptor<>("sum", Long::sum, Long.class));
            recent = getRuntimeContext().getListState(new ListStateDescriptor<>("recent", Long.class));
            seen = getRuntimeContext().getMapState(new MapStateDescriptor<>("seen", Long.class, Boolean.class));
        }

        @Override
        public void processElement(Tuple3<Integer, Long, Long> e, Context ctx, Collector<String> out) throws Exception {
            Long n = count.value();
            count.update(n == null ? 1 : n + 1);
            sum.add(e.f2);
            recent.update(lastThree(recent.get(), e.f2));
            seen.put(e.f2 % 7, true);
            out.collect(e.f0 + ":" + count.value() + ":" + sum.get() + ":" + copy(recent.get()) + ":" + size(seen.keys()));
        }
    }

    /** {@link EveryKindSync} with asynchronous state, through its blocking calls. */
    static final class EveryKindAsync extends KeyedProcessFunction<Integer, Tuple3<Integer, Long, Long>, String> {
        private transient org.apache.flink.api.common.state.v2.ValueState<Long> count;
        private transient org.apache.flink.api.common.state.v2.ReducingState<Long> sum;
        private transient org.apache.flink.api.common.state.v2.ListState<Long> recent;
        private transient org.apache.flink.api.common.state.v2.MapState<Long, Boolean> seen;

        @Override
        public void open(OpenContext ctx) {
            count = getRuntimeContext().getState(
                    new org.apache.flink.api.common.state.v2.ValueStateDescriptor<>("count", Long.class));
            sum = getRuntimeContext().getReducingState(
                    new org.apache.flink.api.common.state.v2.ReducingStateDescriptor<>("sum", Long::sum, Long.class));
            recent = getRuntimeContext().getListState(
                    new org.apache.flink.api.common.state.v2.ListStateDescriptor<>("recent", Long.class));
            seen = getRuntimeContext().getMapState(
                    new org.apache.flink.api.common.state.v2.MapStateDescriptor<>("seen", Long.class, Boolean.class));
        }

        @Override
        public void processElement(Tuple3<Integer, Long, Long> e, Context ctx, Collector<String> out) throws Exception {
            Long n = count.value();
            count.update(n == null ? 1 : n + 1);
            sum.add(e.f2);
            recent.update(lastThree(recent.get(), e.f2));
            seen.put(e.f2 % 7, true);
            out.collect(e.f0 + ":" + count.value() + ":" + sum.get() + ":" + copy(recent.get()) + ":" + size(seen.keys()));
        }
    }

    /** The stored elements (none when null: an empty list state reads as null through Flink's adaptor). */
    private static List<Long> copy(Iterable<Long> stored) {
        List<Long> out = new ArrayList<>();
        if (stored != null) {
            stored.forEach(out::add);
        }
        return out;
    }

    private static List<Long> lastThree(Iterable<Long> stored, long value) {
        List<Long> all = copy(stored);
        all.add(value);
        return new ArrayList<>(all.subList(Math.max(0, all.size() - 3), all.size()));
    }

    private static int size(Iterable<?> elements) {
        int n = 0;
        for (Object ignored : elements) {
            n++;
        }
        return n;
    }
}
