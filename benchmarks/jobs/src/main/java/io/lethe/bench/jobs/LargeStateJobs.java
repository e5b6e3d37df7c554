package io.lethe.bench.jobs;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.v2.StateFuture;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple3;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.connector.datagen.source.GeneratorFunction;
import org.apache.flink.streaming.api.datastream.KeyedStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.functions.sink.legacy.DiscardingSink;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;

import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * The large-state jobs: state many times the managed memory, read back at random. Both run without end
 * (the benchmark stops them) and make record i from i alone, so every backend sees the same input.
 *
 * <ul>
 *   <li><b>keyed</b>: per key a 200-byte profile (value state) and two 64-byte counters (map state). The
 *       first {@code keys} records load every key once, in a scrambled order; after that each record picks
 *       a key uniformly at random, reads its profile and one counter and writes both: lookups that mostly
 *       miss the backend's cache, and never miss the state.
 *   <li><b>keyed-async</b>: the keyed job with asynchronous state (Flink's State V2, {@code
 *       enableAsyncState()}): each record's two reads are issued at once, and its two writes once both
 *       reads are back. Backends serve the requests in batches where they have an executor of their own
 *       (Lethe, ForSt), one at a time through Flink's synchronous adaptor otherwise (RocksDB).
 *   <li><b>windowed</b>: records with a 200-byte payload, one per event-time millisecond, over {@code
 *       windowKeys} keys, in tumbling windows of {@code windowRecords} ms kept {@link #LATENESS_WINDOWS}
 *       windows past their end (allowed lateness): every element is stored, each window fires once at
 *       its end and is cleared at its cleanup time, so the stored state stays between 13 and 14 windows.
 * </ul>
 *
 * Payloads are half fixed text, half random characters from 64 symbols: they compress, about as much
 * as records of text fields do, so compressing backends keep their advantage on disk.
 */
final class LargeStateJobs {
    static final int PROFILE_BYTES = 200;
    static final int COUNTER_BYTES = 64;
    static final int PAYLOAD_BYTES = 200;
    static final int LATENESS_WINDOWS = 13;
    private static final byte[] TEXT = "user-profile;region=eu-west;device=mobile;plan=standard;"
            .getBytes(StandardCharsets.US_ASCII);
    private static final byte[] SYMBOLS =
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".getBytes(StandardCharsets.US_ASCII);

    private LargeStateJobs() {}

    /**
     * The sizes of a mode. {@code keys} and {@code windowKeys} are powers of two (keys are scrambled by
     * an odd multiplier modulo them, a bijection).
     */
    record Sizes(long keys, long windowKeys, long windowRecords, long steadySeconds, long coldSeconds,
            long checkpointSeconds) {
        /** Records before the measured phase: every key loaded once, or the windows filled. */
        long loadRecords(String job) {
            return keyed(job) ? keys : windowRecords * (LATENESS_WINDOWS + 1);
        }

        /** What the state holds in serialized keys and values, before any backend's overhead or compression. */
        long logicalBytes(String job) {
            return keyed(job)
                    ? keys * (Long.BYTES + PROFILE_BYTES + 2 * (Integer.BYTES + COUNTER_BYTES))
                    : windowRecords * LATENESS_WINDOWS * (3L * Long.BYTES + PAYLOAD_BYTES);
        }
    }

    /** Whether {@code job} is the keyed job, with synchronous or asynchronous state. */
    static boolean keyed(String job) {
        return job.startsWith("keyed");
    }

    /** Whether {@code job} uses asynchronous state. */
    static boolean asyncState(String job) {
        return job.endsWith("-async");
    }

    static void build(StreamExecutionEnvironment env, String job, Sizes sizes) {
        switch (job) {
            case "keyed", "keyed-async" -> keyedJob(env, sizes.keys(), asyncState(job));
            case "windowed" -> windowedJob(env, sizes.windowKeys(), sizes.windowRecords());
            default -> throw new IllegalArgumentException(job);
        }
    }

    private static void keyedJob(StreamExecutionEnvironment env, long keys, boolean asyncState) {
        TypeInformation<Tuple3<Long, Long, Long>> type = Types.TUPLE(Types.LONG, Types.LONG, Types.LONG);
        KeyedStream<Tuple3<Long, Long, Long>, Long> byKey = env.fromSource(
                        new DataGeneratorSource<>(new KeyedRecords(keys), Long.MAX_VALUE, type),
                        WatermarkStrategy.noWatermarks(), "records").uid("records")
                .keyBy(e -> e.f0);
        (asyncState ? byKey.enableAsyncState().process(new AsyncProfiles(keys)) : byKey.process(new Profiles(keys)))
                .uid("profiles").addSink(new DiscardingSink<>()).uid("sink");
    }

    private static void windowedJob(StreamExecutionEnvironment env, long keys, long windowRecords) {
        TypeInformation<Tuple3<Long, Long, byte[]>> type =
                Types.TUPLE(Types.LONG, Types.LONG, PrimitiveArrayTypeInfo.BYTE_PRIMITIVE_ARRAY_TYPE_INFO);
        env.fromSource(new DataGeneratorSource<>(new WindowedRecords(keys, windowRecords), Long.MAX_VALUE, type),
                        WatermarkStrategy.<Tuple3<Long, Long, byte[]>>forMonotonousTimestamps()
                                .withTimestampAssigner((e, t) -> e.f1), "records").uid("records")
                .keyBy(e -> e.f0)
                .window(TumblingEventTimeWindows.of(Duration.ofMillis(windowRecords)))
                .allowedLateness(Duration.ofMillis(windowRecords * LATENESS_WINDOWS))
                .process(new WindowResult()).uid("windows")
                .addSink(new DiscardingSink<>()).uid("sink");
    }

    /** Text-like bytes made from {@code seed}: half fixed text, half random symbols. */
    static byte[] payload(long seed, int length) {
        byte[] b = new byte[length];
        long x = Jobs.mix(seed) | 1;
        for (int i = 0; i < length; i++) {
            if ((i & 7) < 4) {
                b[i] = TEXT[i % TEXT.length];
            } else {
                x ^= x << 13;
                x ^= x >>> 7;
                x ^= x << 17;
                b[i] = SYMBOLS[(int) (x & 63)];
            }
        }
        return b;
    }

    /** Record i of the keyed job: (key, i, 0); keys 0..keys-1 once each first, then uniformly at random. */
    static final class KeyedRecords implements GeneratorFunction<Long, Tuple3<Long, Long, Long>> {
        /** Odd, so multiplying by it permutes the residues modulo a power of two. */
        private static final long SCRAMBLE = 0x9E3779B97F4A7C15L;
        private final long keys;

        KeyedRecords(long keys) {
            this.keys = keys;
        }

        @Override
        public Tuple3<Long, Long, Long> map(Long i) {
            LiveMetrics.RECORDS.incrementAndGet();
            long key = i < keys ? (i * SCRAMBLE) & (keys - 1) : Jobs.mix(i) & (keys - 1);
            return Tuple3.of(key, i, 0L);
        }
    }

    /** Record i of the windowed job: (key, event time i ms, payload). */
    static final class WindowedRecords implements GeneratorFunction<Long, Tuple3<Long, Long, byte[]>> {
        private final long keys;
        private final long windowRecords;

        WindowedRecords(long keys, long windowRecords) {
            this.keys = keys;
            this.windowRecords = windowRecords;
        }

        @Override
        public Tuple3<Long, Long, byte[]> map(Long i) {
            LiveMetrics.RECORDS.incrementAndGet();
            if (i % windowRecords == 0) {
                // The first record at or past a window's end: from now on the window can close.
                LiveMetrics.WINDOW_CLOSE_NANOS.put(i, System.nanoTime());
            }
            return Tuple3.of(Jobs.mix(i) & (keys - 1), i, payload(i, PAYLOAD_BYTES));
        }
    }

    /** The keyed job's operator: loads a key's state, or reads and rewrites it, timing the state accesses. */
    static final class Profiles extends KeyedProcessFunction<Long, Tuple3<Long, Long, Long>, Long> {
        private final long loadRecords;
        private transient ValueState<byte[]> profile;
        private transient MapState<Integer, byte[]> counters;

        Profiles(long loadRecords) {
            this.loadRecords = loadRecords;
        }

        @Override
        public void open(OpenContext ctx) {
            profile = getRuntimeContext().getState(
                    new ValueStateDescriptor<>("profile", PrimitiveArrayTypeInfo.BYTE_PRIMITIVE_ARRAY_TYPE_INFO));
            counters = getRuntimeContext().getMapState(
                    new MapStateDescriptor<>("counters", Types.INT, PrimitiveArrayTypeInfo.BYTE_PRIMITIVE_ARRAY_TYPE_INFO));
            LiveMetrics.OPENED_AT_MILLIS.set(System.currentTimeMillis());
        }

        @Override
        public void processElement(Tuple3<Long, Long, Long> e, Context ctx, Collector<Long> out) throws Exception {
            long i = e.f1;
            byte[] newProfile = payload(i, PROFILE_BYTES);
            byte[] newCounter = payload(i + 1, COUNTER_BYTES);
            long start = System.nanoTime();
            if (i < loadRecords) {
                profile.update(newProfile);
                counters.put(0, newCounter);
                counters.put(1, payload(i + 2, COUNTER_BYTES));
            } else {
                int counter = (int) (i & 1);
                boolean found = profile.value() != null & counters.get(counter) != null;
                profile.update(newProfile);
                counters.put(counter, newCounter);
                LiveMetrics.LOOKUPS.incrementAndGet();
                if (!found) {
                    LiveMetrics.MISSING.incrementAndGet();
                }
            }
            LiveMetrics.LATENCY_NANOS.recordValue(System.nanoTime() - start);
        }
    }

    /**
     * {@link Profiles} with asynchronous state: a record's two reads go out together, its two writes once
     * both are back; its latency runs from the requests to the completion of the last write.
     */
    static final class AsyncProfiles extends KeyedProcessFunction<Long, Tuple3<Long, Long, Long>, Long> {
        private final long loadRecords;
        private transient org.apache.flink.api.common.state.v2.ValueState<byte[]> profile;
        private transient org.apache.flink.api.common.state.v2.MapState<Integer, byte[]> counters;

        AsyncProfiles(long loadRecords) {
            this.loadRecords = loadRecords;
        }

        @Override
        public void open(OpenContext ctx) {
            profile = getRuntimeContext().getState(new org.apache.flink.api.common.state.v2.ValueStateDescriptor<>(
                    "profile", PrimitiveArrayTypeInfo.BYTE_PRIMITIVE_ARRAY_TYPE_INFO));
            counters = getRuntimeContext().getMapState(new org.apache.flink.api.common.state.v2.MapStateDescriptor<>(
                    "counters", Types.INT, PrimitiveArrayTypeInfo.BYTE_PRIMITIVE_ARRAY_TYPE_INFO));
            LiveMetrics.OPENED_AT_MILLIS.set(System.currentTimeMillis());
        }

        @Override
        public void processElement(Tuple3<Long, Long, Long> e, Context ctx, Collector<Long> out) {
            long i = e.f1;
            byte[] newProfile = payload(i, PROFILE_BYTES);
            byte[] newCounter = payload(i + 1, COUNTER_BYTES);
            long start = System.nanoTime();
            StateFuture<Void> written;
            if (i < loadRecords) {
                profile.asyncUpdate(newProfile);
                counters.asyncPut(0, newCounter);
                written = counters.asyncPut(1, payload(i + 2, COUNTER_BYTES));
            } else {
                int counter = (int) (i & 1);
                written = profile.asyncValue().thenCombine(counters.asyncGet(counter), (p, c) -> p != null & c != null)
                        .thenCompose(found -> {
                            LiveMetrics.LOOKUPS.incrementAndGet();
                            if (!found) {
                                LiveMetrics.MISSING.incrementAndGet();
                            }
                            profile.asyncUpdate(newProfile);
                            return counters.asyncPut(counter, newCounter);
                        });
            }
            written.thenAccept(done -> LiveMetrics.LATENCY_NANOS.recordValue(System.nanoTime() - start));
        }
    }

    /**
     * The windowed job's result: a window's element count and bytes, with its latency from the moment it
     * could close (its first record past the end was made) to now: the watermark's delay and the
     * reading of every key's window that fires at that watermark.
     */
    static final class WindowResult extends ProcessWindowFunction<Tuple3<Long, Long, byte[]>, Long, Long, TimeWindow> {
        @Override
        public void open(OpenContext ctx) {
            LiveMetrics.OPENED_AT_MILLIS.set(System.currentTimeMillis());
        }

        @Override
        public void process(Long key, Context ctx, Iterable<Tuple3<Long, Long, byte[]>> input, Collector<Long> out) {
            long bytes = 0;
            for (Tuple3<Long, Long, byte[]> e : input) {
                bytes += e.f2.length;
            }
            Long closeNanos = LiveMetrics.WINDOW_CLOSE_NANOS.get(ctx.window().getEnd());
            if (closeNanos != null) {
                LiveMetrics.LATENCY_NANOS.recordValue(Math.max(0, System.nanoTime() - closeNanos));
            }
            LiveMetrics.WINDOWS_FIRED.incrementAndGet();
            out.collect(bytes);
        }
    }
}
