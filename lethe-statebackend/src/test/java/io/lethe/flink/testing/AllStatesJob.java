package io.lethe.flink.testing;

import io.lethe.flink.LetheStateBackendFactory;

import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.state.AggregatingState;
import org.apache.flink.api.common.state.AggregatingStateDescriptor;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ReducingState;
import org.apache.flink.api.common.state.ReducingStateDescriptor;
import org.apache.flink.api.common.state.StateTtlConfig;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple3;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * A job that keeps every kind of keyed state (value, list, map, reducing, aggregating, and a value
 * with TTL), event-time timers, some of them deleted, and window contents. Its output follows from
 * the input alone, not from thread timing, so a run stopped with a savepoint and resumed gives
 * exactly the lines of a run without a stop:
 * <ul>
 *   <li>the source and its watermarks run at parallelism 1, so each key sees its events in input order;
 *   <li>no event is late ({@link TestJobs#watermarks()}), so a timer at the end of a second fires after
 *       every event of that second;
 *   <li>a reminder timer is deleted only while it is certainly pending: when it lies after the current
 *       event's time, which the watermark cannot have passed.
 * </ul>
 */
public final class AllStatesJob {
    /** The lines of every run in this JVM; a test clears it before a run. */
    public static final ConcurrentLinkedQueue<String> OUTPUT = new ConcurrentLinkedQueue<>();

    private AllStatesJob() {}

    /**
     * Adds the job to {@code env}, its events passing {@code gate} right after the source (e.g.
     * {@link Throttle}, so that a run can be stopped mid-input).
     */
    public static void build(StreamExecutionEnvironment env, Gate gate) {
        DataStream<Tuple3<Integer, Long, Long>> events = env.fromData(TestJobs.events()).setParallelism(1)
                .map(gate).returns(Types.TUPLE(Types.INT, Types.LONG, Types.LONG)).setParallelism(1)
                .assignTimestampsAndWatermarks(TestJobs.watermarks()).setParallelism(1);
        DataStream<String> perEvent = events.keyBy(e -> e.f0).process(new EveryState());
        DataStream<String> windows = events.keyBy(e -> e.f0)
                .window(TumblingEventTimeWindows.of(Duration.ofSeconds(1)))
                .aggregate(new TestJobs.CountAndSum(), new WindowLine());
        perEvent.union(windows).map(line -> {
            OUTPUT.add(line);
            return line;
        }).sinkTo(new DiscardingSink<>());
    }

    /** Runs the job to its end at parallelism 2 (its keyed operators; the source runs alone). */
    public static void run(Configuration conf, Gate gate) throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(2);
        build(env, gate);
        env.execute();
    }

    /** The lines of a run without a stop or a failure, on the HashMap backend (clears {@link #OUTPUT}). */
    public static Set<String> linesWithoutFailure() throws Exception {
        OUTPUT.clear();
        run(new Configuration(), open());
        Set<String> lines = new TreeSet<>(OUTPUT);
        OUTPUT.clear();
        return lines;
    }

    /** Lethe, incremental checkpoints every 100 ms into {@code checkpoints}, and one restart. */
    public static Configuration onLetheWithOneRestart(Path checkpoints) {
        Configuration conf = new Configuration();
        conf.set(StateBackendOptions.STATE_BACKEND, LetheStateBackendFactory.class.getName());
        conf.set(CheckpointingOptions.INCREMENTAL_CHECKPOINTS, true);
        conf.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, Duration.ofMillis(100));
        conf.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, checkpoints.toUri().toString());
        conf.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
        conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, 1);
        conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ofMillis(100));
        return conf;
    }

    /** What the events pass right after the source: (user, event time ms, value) in, the same out. */
    public interface Gate extends MapFunction<Tuple3<Integer, Long, Long>, Tuple3<Integer, Long, Long>> {}

    /** Passes every event on unchanged. */
    public static Gate open() {
        return e -> e;
    }

    /** Sleeps a millisecond every {@code events} events (ten by default). */
    public static final class Throttle implements Gate {
        private final int events;
        private long seen;

        public Throttle() {
            this(10);
        }

        public Throttle(int events) {
            this.events = events;
        }

        @Override
        public Tuple3<Integer, Long, Long> map(Tuple3<Integer, Long, Long> e) throws Exception {
            if (++seen % events == 0) {
                Thread.sleep(1);
            }
            return e;
        }
    }

    /** "w:user:window start:count/sum". */
    static final class WindowLine extends ProcessWindowFunction<String, String, Integer, TimeWindow> {
        @Override
        public void process(Integer user, Context ctx, Iterable<String> result, Collector<String> out) {
            out.collect("w:" + user + ":" + ctx.window().getStart() + ":" + result.iterator().next());
        }
    }

    /** Every state kind, updated per event; a timer at the end of each second and a moving reminder. */
    static final class EveryState extends KeyedProcessFunction<Integer, Tuple3<Integer, Long, Long>, String> {
        private static final int RECENT = 5;
        private transient ValueState<Long> count;
        private transient ValueState<Long> ttlCount;
        private transient ValueState<Long> reminder;
        private transient ListState<Long> recent;
        private transient MapState<Long, Long> perSecond;
        private transient ReducingState<Long> sum;
        private transient AggregatingState<Tuple3<Integer, Long, Long>, String> countAndSum;

        @Override
        public void open(OpenContext openContext) {
            count = getRuntimeContext().getState(new ValueStateDescriptor<>("count", Types.LONG));
            ValueStateDescriptor<Long> ttl = new ValueStateDescriptor<>("ttl-count", Types.LONG);
            ttl.enableTimeToLive(StateTtlConfig.newBuilder(Duration.ofHours(1)).build());
            ttlCount = getRuntimeContext().getState(ttl);
            reminder = getRuntimeContext().getState(new ValueStateDescriptor<>("reminder", Types.LONG));
            recent = getRuntimeContext().getListState(new ListStateDescriptor<>("recent", Types.LONG));
            perSecond = getRuntimeContext().getMapState(new MapStateDescriptor<>("per-second", Types.LONG, Types.LONG));
            sum = getRuntimeContext().getReducingState(new ReducingStateDescriptor<>("sum", Long::sum, Types.LONG));
            countAndSum = getRuntimeContext().getAggregatingState(new AggregatingStateDescriptor<>("count-and-sum",
                    new TestJobs.CountAndSum(), PrimitiveArrayTypeInfo.LONG_PRIMITIVE_ARRAY_TYPE_INFO));
        }

        @Override
        public void processElement(Tuple3<Integer, Long, Long> e, Context ctx, Collector<String> out) throws Exception {
            long n = increment(count);
            long ttl = increment(ttlCount);
            List<Long> last = keepRecent(e.f2);
            long second = e.f1 / 1000;
            Long inSecond = perSecond.get(second);
            perSecond.put(second, inSecond == null ? 1 : inSecond + 1);
            sum.add(e.f2);
            countAndSum.add(e);
            ctx.timerService().registerEventTimeTimer(second * 1000 + 999);
            moveReminder(e.f1, ctx);
            out.collect("e:" + e.f0 + ":" + n + ":" + ttl + ":" + last + ":" + perSecond.get(second) + ":" + sum.get()
                    + ":" + countAndSum.get());
        }

        @Override
        public void onTimer(long ts, OnTimerContext ctx, Collector<String> out) throws Exception {
            if (ts % 1000 == 999) {
                long second = ts / 1000;
                out.collect("t:" + ctx.getCurrentKey() + ":" + second + ":" + perSecond.get(second));
                perSecond.remove(second);
            } else {
                if (Objects.equals(reminder.value(), ts)) {
                    reminder.clear();
                }
                out.collect("r:" + ctx.getCurrentKey() + ":" + ts);
            }
        }

        private static long increment(ValueState<Long> state) throws Exception {
            Long v = state.value();
            long n = v == null ? 1 : v + 1;
            state.update(n);
            return n;
        }

        /** Appends the value and keeps the last few (an append, and a rewrite when too long). */
        private List<Long> keepRecent(long value) throws Exception {
            recent.add(value);
            List<Long> all = new ArrayList<>();
            recent.get().forEach(all::add);
            if (all.size() > RECENT) {
                all = new ArrayList<>(all.subList(all.size() - RECENT, all.size()));
                recent.update(all);
            }
            return all;
        }

        /**
         * A reminder two seconds on, at half past (never a second's end, whose timer it would be):
         * the previous one is deleted when it lies after this event's time and so cannot have fired.
         */
        private void moveReminder(long eventTime, Context ctx) throws Exception {
            Long previous = reminder.value();
            if (previous != null && previous > eventTime) {
                ctx.timerService().deleteEventTimeTimer(previous);
            }
            long next = (eventTime / 1000 + 2) * 1000 + 500;
            ctx.timerService().registerEventTimeTimer(next);
            reminder.update(next);
        }
    }
}
