package io.lethe.flink.testing;

import io.lethe.flink.LetheStateBackendFactory;

import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple3;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.WindowedStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;

import java.nio.file.Path;
import java.time.Duration;
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
     * {@link Throttle}, so that a run can be stopped mid-input); its keyed operators use synchronous state.
     */
    public static void build(StreamExecutionEnvironment env, Gate gate) {
        build(env, gate, false);
    }

    /**
     * As above; with {@code asyncState} its keyed operators use asynchronous state (State V2) with the
     * same state names and types. Every stateful operator has a uid, so a savepoint of the job with one
     * kind of state restores into the job with the other.
     */
    public static void build(StreamExecutionEnvironment env, Gate gate, boolean asyncState) {
        DataStream<Tuple3<Integer, Long, Long>> events = env.fromData(TestJobs.events()).uid("events").setParallelism(1)
                .map(gate).uid("gate").returns(Types.TUPLE(Types.INT, Types.LONG, Types.LONG)).setParallelism(1)
                .assignTimestampsAndWatermarks(TestJobs.watermarks()).uid("watermarks").setParallelism(1);
        DataStream<String> perEvent = asyncState
                ? events.keyBy(e -> e.f0).enableAsyncState().process(new EveryState.Asynchronous()).uid("every-state")
                : events.keyBy(e -> e.f0).process(new EveryState.Synchronous()).uid("every-state");
        WindowedStream<Tuple3<Integer, Long, Long>, Integer, TimeWindow> windowed = events.keyBy(e -> e.f0)
                .window(TumblingEventTimeWindows.of(Duration.ofSeconds(1)));
        DataStream<String> windows = (asyncState ? windowed.enableAsyncState() : windowed)
                .aggregate(new TestJobs.CountAndSum(), new WindowLine()).uid("windows");
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
}
