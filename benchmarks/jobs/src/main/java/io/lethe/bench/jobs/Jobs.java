package io.lethe.bench.jobs;

import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.api.common.accumulators.LongMaximum;
import org.apache.flink.api.common.accumulators.LongMinimum;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.StateTtlConfig;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.api.java.tuple.Tuple3;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.connector.datagen.source.GeneratorFunction;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.functions.sink.legacy.DiscardingSink;
import org.apache.flink.streaming.api.functions.windowing.RichWindowFunction;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.assigners.WindowAssigner;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;

import java.time.Duration;

/**
 * The benchmark's jobs. An event is (key, event time, creation time): record i has event time i /
 * {@link #RECORDS_PER_MS} ms, and its creation time is when the source made it; in a paced run, when
 * the schedule said it was due if the source was held back (so a backend that falls behind shows it in
 * its latency instead of hiding it). Creation times are {@link System#nanoTime} readings: the
 * MiniCluster runs in this JVM.
 */
final class Jobs {
    static final long WINDOW_KEYS = 20_000;
    static final long RECORDS_PER_MS = 20;
    static final Duration TTL = Duration.ofSeconds(5);
    /** Accumulator: result latencies (µs). */
    static final String LATENCY = "latency-us";
    /** Accumulators: when the first and the last window fired ({@link System#nanoTime}). */
    static final String FIRST_FIRE = "first-fire-ns";
    static final String LAST_FIRE = "last-fire-ns";
    /** The timers job's windows: long enough to hold its whole input. */
    static final Duration TIMERS_WINDOW = Duration.ofHours(1);

    private Jobs() {}

    /** Records 0..records-1 as events, {@code rate} per second or as fast as the job takes them (rate 0). */
    static DataStream<Tuple3<Long, Long, Long>> events(StreamExecutionEnvironment env, long records, long rate,
            long keys) {
        TypeInformation<Tuple3<Long, Long, Long>> type = Types.TUPLE(Types.LONG, Types.LONG, Types.LONG);
        DataGeneratorSource<Tuple3<Long, Long, Long>> source =
                new DataGeneratorSource<>(new Generator(rate, keys), records, type);
        return env.fromSource(source, WatermarkStrategy.<Tuple3<Long, Long, Long>>forMonotonousTimestamps()
                .withTimestampAssigner((e, t) -> e.f1), "events").setParallelism(1)
                .map(new SteadyProbe<Tuple3<Long, Long, Long>>(records)).returns(type).setParallelism(1);
    }

    /** Event-time windows holding every element, counted when they fire (with their latency when paced). */
    static void windowJob(StreamExecutionEnvironment env, long records, long rate,
            WindowAssigner<Object, TimeWindow> windows) {
        events(env, records, rate, WINDOW_KEYS).keyBy(e -> e.f0).window(windows).apply(new CountWindow(rate))
                .addSink(new DiscardingSink<>());
    }

    /**
     * {@code keys} distinct keys, one event each, all in one tumbling window per key: a timer per key
     * pending until the input ends, when one watermark step fires them all (each reads and clears
     * its window's contents).
     */
    static void timersJob(StreamExecutionEnvironment env, long keys) {
        events(env, keys, 0, Long.MAX_VALUE).keyBy(e -> e.f0).window(TumblingEventTimeWindows.of(TIMERS_WINDOW))
                .apply(new CountWindow(0)).addSink(new DiscardingSink<>());
    }

    /** Milliseconds from the first window fired to the last; NaN if none fired. */
    static double fireMillis(JobExecutionResult result) {
        Long first = result.getAccumulatorResult(FIRST_FIRE);
        Long last = result.getAccumulatorResult(LAST_FIRE);
        return first == null || last == null ? Double.NaN : (last - first) / 1e6;
    }

    /** De-duplication with a TTL'd value state; every key arrives about four times, spread out. */
    static void ttlJob(StreamExecutionEnvironment env, long records, long rate) {
        events(env, records, rate, Math.max(1, records / 4)).keyBy(e -> e.f0).process(new Dedup())
                .addSink(new DiscardingSink<>());
    }

    /** A fixed permutation-like hash, so keys repeat spread over the input. */
    static long mix(long i) {
        long x = i * 0x9E3779B97F4A7C15L;
        x ^= x >>> 31;
        return x & Long.MAX_VALUE;
    }

    /** Makes event i, pacing itself in steps of 256 records when {@code rate} > 0. */
    static final class Generator implements GeneratorFunction<Long, Tuple3<Long, Long, Long>> {
        private static final int STEP = 256;
        private final long rate;
        private final long keys;
        private transient long startNanos;

        Generator(long rate, long keys) {
            this.rate = rate;
            this.keys = keys;
        }

        @Override
        public void open(SourceReaderContext context) {
            startNanos = System.nanoTime();
        }

        @Override
        public Tuple3<Long, Long, Long> map(Long i) throws InterruptedException {
            long now = System.nanoTime();
            if (rate > 0) {
                long due = startNanos + (long) (i * 1e9 / rate);
                if (i % STEP == 0 && due - now > 1_000_000) {
                    Thread.sleep((due - now) / 1_000_000);
                    now = System.nanoTime();
                }
                // Made when due, or later when the job held the source back (then its wait counts).
                now = Math.max(now, due);
            }
            return Tuple3.of(mix(i) % keys, i / RECORDS_PER_MS, now);
        }
    }

    /**
     * Counts a window's elements. In a paced run its latency runs from the moment the window could close,
     * the due time of the first record past its end, to now: the watermark's delay, the firing of every
     * key's window at that watermark (the backend's reads) and queueing. That due time follows from the
     * newest element's: records are due 1 / rate apart and {@link #RECORDS_PER_MS} per event-time ms.
     */
    static final class CountWindow
            extends RichWindowFunction<Tuple3<Long, Long, Long>, Long, Long, TimeWindow> {
        private final long rate;
        private transient LatencyAccumulator latency;
        private transient LongMinimum firstFire;
        private transient LongMaximum lastFire;

        CountWindow(long rate) {
            this.rate = rate;
        }

        @Override
        public void open(OpenContext ctx) {
            latency = new LatencyAccumulator();
            getRuntimeContext().addAccumulator(LATENCY, latency);
            firstFire = new LongMinimum();
            lastFire = new LongMaximum();
            getRuntimeContext().addAccumulator(FIRST_FIRE, firstFire);
            getRuntimeContext().addAccumulator(LAST_FIRE, lastFire);
        }

        @Override
        public void apply(Long key, TimeWindow window, Iterable<Tuple3<Long, Long, Long>> input, Collector<Long> out) {
            long n = 0;
            Tuple3<Long, Long, Long> newest = null;
            for (Tuple3<Long, Long, Long> e : input) {
                n++;
                newest = newest == null || e.f2 > newest.f2 ? e : newest;
            }
            if (rate > 0 && newest != null) {
                long recordsToEnd = (window.getEnd() - newest.f1) * RECORDS_PER_MS;
                long closeDue = newest.f2 + (long) (recordsToEnd * 1e9 / rate);
                latency.add((System.nanoTime() - closeDue) / 1000);
            }
            long now = System.nanoTime();
            firstFire.add(now);
            lastFire.add(now);
            out.collect(n);
        }
    }

    /** Emits a key's first event while its TTL'd marker lives; latency from each event's creation. */
    static final class Dedup extends KeyedProcessFunction<Long, Tuple3<Long, Long, Long>, Long> {
        private transient ValueState<Long> seen;
        private transient LatencyAccumulator latency;

        @Override
        public void open(OpenContext ctx) {
            ValueStateDescriptor<Long> d = new ValueStateDescriptor<>("seen", Long.class);
            d.enableTimeToLive(StateTtlConfig.newBuilder(TTL).build());
            seen = getRuntimeContext().getState(d);
            latency = new LatencyAccumulator();
            getRuntimeContext().addAccumulator(LATENCY, latency);
        }

        @Override
        public void processElement(Tuple3<Long, Long, Long> e, Context ctx, Collector<Long> out) throws Exception {
            if (seen.value() == null) {
                seen.update(e.f1);
                out.collect(e.f0);
            }
            latency.add((System.nanoTime() - e.f2) / 1000);
        }
    }
}
