package io.lethe.examples;

import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;
import org.apache.flink.util.ParameterTool;
import org.apache.flink.util.TimeUtils;

import java.time.Duration;
import java.util.HashSet;
import java.util.Locale;
import java.util.Set;

/**
 * Page views per page in tumbling event-time windows over a click stream: clicks and distinct
 * users per page and window. The window holds its clicks until it fires (list state per page and
 * window); on Lethe the contents carry the window's end as delete key and leave by whole-page drops
 * once the window is cleaned up.
 *
 * <p>Locally (no {@code --bootstrap-servers}): a MiniCluster with a generated stream, progress
 * while it runs and a report at the end, including whether the results equal a plain Java
 * computation of the same stream. Options: {@code --rate} clicks per second (100,000; 0: as fast
 * as possible), {@code --seconds} (45) or {@code --clicks N}, {@code --pages} (1,000), {@code
 * --users} (100,000), {@code --clicks-per-event-second} (10,000: event time runs ten times faster
 * than the wall clock at the default rate), {@code --window} (10 s), and {@link LocalRun}'s options.
 *
 * <p>On a cluster: {@code --bootstrap-servers HOST:PORT --input-topic clicks [--output-topic
 * page-views] [--group-id ID] [--bounded]}; clicks are text lines {@code id,timestamp,user,page}
 * (see {@link ClickProducer}); results go exactly once to the output topic as {@code
 * windowEnd,page,clicks,users}, or to stdout. Checkpointing and the state backend come from the
 * cluster's configuration (see {@code examples/conf/config.yaml}).
 */
public final class ClickWindows {
    public static final Duration DEFAULT_WINDOW = Duration.ofSeconds(10);

    private ClickWindows() {}

    /** Clicks and distinct users per page and tumbling event-time window. */
    public static DataStream<PageViews> pageViews(DataStream<Click> clicks, Duration window) {
        return clicks.keyBy(c -> c.page, Types.INT)
                .window(TumblingEventTimeWindows.of(window))
                .process(new CountViews())
                .name("page views")
                .uid("page-views");
    }

    /** Counts a window's clicks and distinct users when it fires. */
    static final class CountViews extends ProcessWindowFunction<Click, PageViews, Integer, TimeWindow> {
        @Override
        public void process(Integer page, Context context, Iterable<Click> clicks, Collector<PageViews> out) {
            long n = 0;
            Set<Long> users = new HashSet<>();
            for (Click c : clicks) {
                n++;
                users.add(c.user);
            }
            out.collect(new PageViews(context.window().getEnd(), page, n, users.size()));
        }
    }

    public static void main(String[] args) throws Exception {
        ParameterTool params = ParameterTool.fromArgs(args);
        Duration window = TimeUtils.parseDuration(params.get("window", "10 s"));
        if (params.has("bootstrap-servers")) {
            KafkaIo.runOnCluster(params, "click-windows", clicks -> pageViews(clicks, window).map(PageViews::toCsv));
        } else {
            System.exit(runLocally(params, window) ? 0 : 1);
        }
    }

    /** The README's main job; returns whether the results equal the plain computation. */
    static boolean runLocally(ParameterTool params, Duration window) throws Exception {
        LocalRun run = new LocalRun(params);
        long rate = params.getLong("rate", 100_000);
        long n = params.getLong("clicks", rate > 0 ? rate * params.getLong("seconds", 45) : 5_000_000);
        ClickStream stream = new ClickStream(params.getLong("clicks-per-event-second", 10_000),
                params.getLong("users", 100_000), params.getInt("pages", 1_000), 0, ClickStream.DEFAULT_START_MILLIS);
        System.out.printf(Locale.ROOT, "Click windows on %s: %,d clicks%s, %,d pages, %,d users, tumbling %s event-time"
                        + " windows, parallelism %d, checkpoints every %s%s%n", run.backend, n,
                rate > 0 ? String.format(Locale.ROOT, " at %,d/s", rate) : "", stream.pages(), stream.users(),
                TimeUtils.formatWithHighestUnit(window), run.parallelism,
                TimeUtils.formatWithHighestUnit(run.checkpointInterval),
                run.backend.equals("lethe") ? ", D_th " + TimeUtils.formatWithHighestUnit(run.deletePersistenceThreshold)
                        : "");
        StreamExecutionEnvironment env = run.environment();
        LocalRun.fingerprintAndDiscard(pageViews(LocalRun.generated(env, stream, n, rate), window),
                PageViews::fingerprint);
        JobExecutionResult result;
        try {
            result = run.execute(env, "Lethe example: click windows");
        } finally {
            run.cleanUp();
        }

        long[] expected = new long[2];
        Set<Long> windows = new HashSet<>();
        stream.referencePageViews(n, window, false, v -> {
            expected[0]++;
            expected[1] += v.fingerprint();
            windows.add(v.windowEnd);
        });
        long results = LocalRun.accumulator(result, LocalRun.RESULTS);
        long fingerprint = LocalRun.accumulator(result, LocalRun.FINGERPRINT);
        boolean same = results == expected[0] && fingerprint == expected[1];

        System.out.println();
        System.out.println("Report");
        LocalRun.row("clicks processed", String.format(Locale.ROOT, "%,d in %.1f s (%,.0f/s)", n, run.seconds,
                n / run.seconds));
        LocalRun.row("windows fired", String.format(Locale.ROOT, "%,d page views (page x window) over %,d windows",
                results, windows.size()));
        LocalRun.row("results", same ? "equal to a plain Java computation of the same stream"
                : String.format(Locale.ROOT, "DIFFER from a plain Java computation: %,d results (expected %,d),"
                        + " fingerprint %x (expected %x)", results, expected[0], fingerprint, expected[1]));
        run.printEngineReport();
        return same;
    }
}
