package io.lethe.examples;

import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.StateTtlConfig;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.ParameterTool;
import org.apache.flink.util.TimeUtils;

import java.io.IOException;
import java.time.Duration;
import java.util.Locale;

/**
 * De-duplication of an at-least-once click stream: the first click of every id passes, repeats
 * within the TTL are dropped. The "seen" flag per id is TTL state; on Lethe it expires through the
 * engine's horizon (no tombstone per id; whole pages drop once all their ids expired) and is
 * physically gone within D_th of expiring.
 *
 * <p>Locally (no {@code --bootstrap-servers}): a MiniCluster with a generated stream in which
 * {@code --duplicate-percent} (10) of the clicks repeat a recent one; {@code --ttl} (5 s), {@code
 * --rate} (100,000/s), {@code --seconds} (30) or {@code --clicks N}, and {@link LocalRun}'s
 * options. On a cluster: {@code --bootstrap-servers HOST:PORT --input-topic clicks
 * [--output-topic unique-clicks] [--group-id ID] [--bounded]}.
 */
public final class TtlDedup {
    private TtlDedup() {}

    /** The first click of every id; repeats arriving within {@code ttl} of it are dropped. */
    public static DataStream<Click> dedup(DataStream<Click> clicks, Duration ttl) {
        return clicks.keyBy(c -> c.id, Types.LONG).process(new Dedup(ttl)).name("dedup").uid("dedup");
    }

    /** Passes a click unless its id was seen within the TTL. */
    static final class Dedup extends KeyedProcessFunction<Long, Click, Click> {
        private final Duration ttl;
        private transient ValueState<Boolean> seen;

        Dedup(Duration ttl) {
            this.ttl = ttl;
        }

        @Override
        public void open(OpenContext context) {
            ValueStateDescriptor<Boolean> descriptor = new ValueStateDescriptor<>("seen", Types.BOOLEAN);
            // Flink's default cleanup in background: on Lethe the horizon, on RocksDB its compaction filter.
            descriptor.enableTimeToLive(StateTtlConfig.newBuilder(ttl).build());
            seen = getRuntimeContext().getState(descriptor);
        }

        @Override
        public void processElement(Click click, Context context, Collector<Click> out) throws IOException {
            if (seen.value() == null) {
                seen.update(true);
                out.collect(click);
            }
        }
    }

    public static void main(String[] args) throws Exception {
        ParameterTool params = ParameterTool.fromArgs(args);
        Duration ttl = TimeUtils.parseDuration(params.get("ttl", "5 s"));
        if (params.has("bootstrap-servers")) {
            KafkaIo.runOnCluster(params, "ttl-dedup", clicks -> dedup(clicks, ttl).map(Click::toCsv));
        } else {
            System.exit(runLocally(params, ttl) ? 0 : 1);
        }
    }

    static boolean runLocally(ParameterTool params, Duration ttl) throws Exception {
        LocalRun run = new LocalRun(params);
        long rate = params.getLong("rate", 100_000);
        long n = params.getLong("clicks", rate > 0 ? rate * params.getLong("seconds", 30) : 3_000_000);
        ClickStream stream = new ClickStream(10_000, 100_000, 1_000, params.getInt("duplicate-percent", 10),
                ClickStream.DEFAULT_START_MILLIS);
        System.out.printf(Locale.ROOT, "TTL de-duplication on %s: %,d clicks, %d %% repeats, TTL %s, parallelism %d%s%n",
                run.backend, n, stream.duplicatePercent(), TimeUtils.formatWithHighestUnit(ttl), run.parallelism,
                run.backend.equals("lethe") ? ", D_th " + TimeUtils.formatWithHighestUnit(run.deletePersistenceThreshold)
                        : "");
        StreamExecutionEnvironment env = run.environment();
        LocalRun.fingerprintAndDiscard(dedup(LocalRun.generated(env, stream, n, rate), ttl), Click::fingerprint);
        JobExecutionResult result;
        try {
            result = run.execute(env, "Lethe example: TTL de-duplication");
        } finally {
            run.cleanUp();
        }

        // Repeats follow their original within microseconds: none outlives the TTL.
        long expected = 0;
        long expectedFingerprint = 0;
        for (long i = 0; i < n; i++) {
            if (!stream.isDuplicate(i)) {
                expected++;
                expectedFingerprint += stream.click(i).fingerprint();
            }
        }
        long results = LocalRun.accumulator(result, LocalRun.RESULTS);
        boolean same = results == expected && LocalRun.accumulator(result, LocalRun.FINGERPRINT) == expectedFingerprint;
        System.out.println();
        System.out.println("Report");
        LocalRun.row("clicks processed", String.format(Locale.ROOT, "%,d in %.1f s (%,.0f/s)", n, run.seconds,
                n / run.seconds));
        LocalRun.row("unique clicks", String.format(Locale.ROOT, "%,d passed, %,d repeats dropped", results,
                n - results));
        LocalRun.row("results", same ? "equal to a plain Java computation of the same stream"
                : String.format(Locale.ROOT, "DIFFER from a plain Java computation: %,d unique clicks (expected %,d)",
                        results, expected));
        run.printEngineReport();
        return same;
    }
}
