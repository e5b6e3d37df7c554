package io.lethe.it.timers;

import io.lethe.flink.LetheStateBackendFactory;

import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.api.common.accumulators.LongMaximum;
import org.apache.flink.api.common.accumulators.LongMinimum;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.util.Collector;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;

/**
 * A job that holds many event-time timers pending at once: one per key for {@code timers} distinct
 * keys, each due long after the last record's time, so that all of them fire in the single
 * watermark step at the end of the input. Runs on Lethe with managed memory 256 MiB, its timers in
 * the engine or on the heap ({@code state.backend.lethe.timer-service.factory}), checkpointing every
 * few seconds, without restarts. Meant for a JVM of its own with a small heap.
 *
 * <p>Prints {@code FIRED <count> <sum of keys> <timers at a wrong time> <checkpoints>} and exits 0
 * when the job finishes; count and sum show that each key's timer fired exactly once.
 *
 * <p>Usage: {@code ManyTimersJob <LETHE|HEAP> <timers> <work directory>}
 */
public final class ManyTimersJob {
    /** How long after its record each timer is due: past every record's time. */
    static final long DELAY = 1L << 40;

    private ManyTimersJob() {}

    public static void main(String[] args) throws Exception {
        String factory = args[0];
        long timers = Long.parseLong(args[1]);
        Path work = Path.of(args[2]);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(1, configuration(factory, work));
        env.fromSequence(0, timers - 1)
                .assignTimestampsAndWatermarks(WatermarkStrategy.<Long>forMonotonousTimestamps()
                        .withTimestampAssigner((key, ts) -> key))
                .keyBy(key -> key)
                .process(new TimerPerKey())
                .sinkTo(new DiscardingSink<>());
        long start = System.nanoTime();
        JobExecutionResult result = env.execute("many timers (" + factory + ")");
        System.out.printf(Locale.ROOT, "FIRED %d %d %d %d%n", (long) result.getAccumulatorResult("fired"),
                (long) result.getAccumulatorResult("sum"), (long) result.getAccumulatorResult("wrong"),
                (long) result.getAccumulatorResult("checkpoints"));
        System.out.printf(Locale.ROOT, "job took %.1f s, of which firing the timers %.1f s%n",
                (System.nanoTime() - start) / 1e9,
                ((long) result.getAccumulatorResult("last") - (long) result.getAccumulatorResult("first")) / 1e3);
    }

    static Configuration configuration(String factory, Path work) {
        Configuration conf = new Configuration();
        conf.set(TaskManagerOptions.MANAGED_MEMORY_SIZE, MemorySize.parse("256m"));
        conf.set(StateBackendOptions.STATE_BACKEND, LetheStateBackendFactory.class.getName());
        conf.setString("state.backend.lethe.timer-service.factory", factory);
        conf.setString("state.backend.lethe.localdir", work.resolve("local").toString());
        conf.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, work.resolve("checkpoints").toUri().toString());
        conf.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, Duration.ofSeconds(3));
        conf.set(RestartStrategyOptions.RESTART_STRATEGY, "none");
        return conf;
    }

    /** Registers one timer per key and counts the timers that fire; counts its completed checkpoints. */
    static final class TimerPerKey extends KeyedProcessFunction<Long, Long, Long>
            implements CheckpointListener {
        private final LongCounter fired = new LongCounter();
        private final LongCounter sum = new LongCounter();
        private final LongCounter wrong = new LongCounter();
        private final LongCounter checkpoints = new LongCounter();
        private final LongMinimum first = new LongMinimum();
        private final LongMaximum last = new LongMaximum();

        @Override
        public void open(OpenContext context) {
            getRuntimeContext().addAccumulator("fired", fired);
            getRuntimeContext().addAccumulator("sum", sum);
            getRuntimeContext().addAccumulator("wrong", wrong);
            getRuntimeContext().addAccumulator("checkpoints", checkpoints);
            getRuntimeContext().addAccumulator("first", first);
            getRuntimeContext().addAccumulator("last", last);
        }

        @Override
        public void processElement(Long key, Context ctx, Collector<Long> out) {
            ctx.timerService().registerEventTimeTimer(key + DELAY);
        }

        @Override
        public void onTimer(long timestamp, OnTimerContext ctx, Collector<Long> out) {
            long now = System.currentTimeMillis();
            first.add(now);
            last.add(now);
            fired.add(1);
            sum.add(ctx.getCurrentKey());
            if (timestamp != ctx.getCurrentKey() + DELAY) {
                wrong.add(1);
            }
        }

        @Override
        public void notifyCheckpointComplete(long checkpointId) {
            checkpoints.add(1);
        }
    }
}
