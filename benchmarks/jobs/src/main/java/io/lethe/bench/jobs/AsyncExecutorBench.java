package io.lethe.bench.jobs;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.state.v2.ValueState;
import org.apache.flink.api.common.state.v2.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.util.Collector;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;

/**
 * How Lethe's asynchronous executor serves a DataStream job whose batches are full: a keyed process
 * function with asynchronous state reads a key's 100-byte value and writes a new random one per record
 * (two requests in two batches), with batches served off the task thread (every batch), with
 * small batches on the task thread (the default), and with every batch on the task thread. Keys
 * are uniform over {@code keys}; one run per setting, records/s over the whole job.
 *
 * <p>Usage: {@code AsyncExecutorBench [records] [keys] [rounds]} (defaults 3,000,000, 1,000,000, 2).
 */
public final class AsyncExecutorBench {
    private static final int[] INLINE_BATCH_SIZES = {0, 100, Integer.MAX_VALUE};

    private AsyncExecutorBench() {}

    public static void main(String[] args) throws Exception {
        long records = args.length > 0 ? Long.parseLong(args[0]) : 3_000_000;
        long keys = args.length > 1 ? Long.parseLong(args[1]) : 1_000_000;
        int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 2;
        System.out.printf(Locale.ROOT, "Async executor: %,d records over %,d keys, %d round(s)%n", records, keys, rounds);
        System.out.println("| round | inline-batch-size | records/s | seconds |");
        System.out.println("|---|---|---|---|");
        for (int round = 1; round <= rounds; round++) {
            for (int inline : INLINE_BATCH_SIZES) {
                double seconds = run(records, keys, inline);
                System.out.printf(Locale.ROOT, "| %d | %s | %,.0f | %.1f |%n", round,
                        inline == Integer.MAX_VALUE ? "all" : String.valueOf(inline), records / seconds, seconds);
            }
        }
    }

    private static double run(long records, long keys, int inlineBatchSize) throws Exception {
        Path local = Files.createTempDirectory("lethe-async-bench");
        try {
            Configuration conf = new Configuration();
            conf.set(StateBackendOptions.STATE_BACKEND, "io.lethe.flink.LetheStateBackendFactory");
            conf.setString("state.backend.lethe.localdir", local.toString());
            conf.setString("state.backend.lethe.async-state.executor", "true");
            conf.setString("state.backend.lethe.async-state.inline-batch-size", String.valueOf(inlineBatchSize));
            conf.setString("taskmanager.memory.managed.size", ExpiryJobBench.MANAGED_MEMORY);
            StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
            env.setParallelism(1);
            env.fromSource(new DataGeneratorSource<>(i -> (i * 0x9E3779B97F4A7C15L >>> 1) % keys, records,
                            RateLimiterStrategy.noOp(), Types.LONG), WatermarkStrategy.noWatermarks(), "keys")
                    .keyBy(k -> k).enableAsyncState().process(new ReadAndWrite())
                    .sinkTo(new DiscardingSink<>());
            long start = System.nanoTime();
            env.execute("async executor, inline-batch-size " + inlineBatchSize);
            return (System.nanoTime() - start) / 1e9;
        } finally {
            ExpiryJobBench.deleteTree(local);
        }
    }

    /** Reads the key's value, then writes a new one. */
    static final class ReadAndWrite extends KeyedProcessFunction<Long, Long, Long> {
        private transient ValueState<byte[]> value;

        @Override
        public void open(org.apache.flink.api.common.functions.OpenContext context) {
            value = getRuntimeContext().getState(
                    new ValueStateDescriptor<>("value", PrimitiveArrayTypeInfo.BYTE_PRIMITIVE_ARRAY_TYPE_INFO));
        }

        @Override
        public void processElement(Long key, Context ctx, Collector<Long> out) {
            value.asyncValue().thenCompose(v -> {
                byte[] next = new byte[100];
                ThreadLocalRandom.current().nextBytes(next);
                next[0] = (byte) (v == null ? 1 : v[0] + 1);
                return value.asyncUpdate(next);
            });
        }
    }
}
