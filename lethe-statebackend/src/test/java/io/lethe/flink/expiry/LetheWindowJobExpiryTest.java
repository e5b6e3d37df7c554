package io.lethe.flink.expiry;

import io.lethe.flink.LetheOptions;
import io.lethe.flink.LetheStateBackendFactory;
import io.lethe.flink.testing.AllStatesJob;
import io.lethe.flink.testing.TestJobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.java.tuple.Tuple3;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.Metric;
import org.apache.flink.runtime.testutils.InMemoryReporter;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.legacy.DiscardingSink;
import org.apache.flink.streaming.api.windowing.assigners.EventTimeSessionWindows;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.assigners.WindowAssigner;
import org.apache.flink.streaming.api.functions.windowing.WindowFunction;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.Map;

/**
 * In a deployed job (MiniCluster), the backend finds the window operator in the task's
 * configuration: for tumbling event-time windows the contents expire by the horizon (gauge
 * {@code lethe.expiry.window-contents} active, horizons moved, pages dropped); for session windows
 * it says why not, and so it does for Flink's asynchronous window operator.
 */
class LetheWindowJobExpiryTest {
    private static final InMemoryReporter REPORTER = InMemoryReporter.createWithRetainedMetrics();

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER = new MiniClusterExtension(
            new MiniClusterResourceConfiguration.Builder()
                    .setConfiguration(REPORTER.addToConfiguration(new Configuration()))
                    .setNumberTaskManagers(1)
                    .setNumberSlotsPerTaskManager(2)
                    .build());

    private static Map<String, Metric> run(WindowAssigner<Object, TimeWindow> assigner) throws Exception {
        return run(assigner, false);
    }

    /** The job, its windows by Flink's asynchronous window operator when {@code async}. */
    private static Map<String, Metric> run(WindowAssigner<Object, TimeWindow> assigner, boolean async)
            throws Exception {
        Configuration conf = new Configuration();
        conf.set(StateBackendOptions.STATE_BACKEND, LetheStateBackendFactory.class.getName());
        conf.set(LetheOptions.USE_MANAGED_MEMORY, false);
        conf.set(LetheOptions.WRITE_BUFFER_SIZE, MemorySize.parse("64kb"));
        conf.set(LetheOptions.PAGE_SIZE, MemorySize.parse("1kb"));
        conf.set(LetheOptions.PAGES_PER_TILE, "4");
        // Horizons move every D_th / 20: often enough within this short job.
        conf.set(LetheOptions.DELETE_PERSISTENCE_THRESHOLD, Duration.ofSeconds(1));
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(1);
        DataStream<Tuple3<Integer, Long, Long>> input = env.fromData(TestJobs.events())
                // Paced (about 1 s in all): the horizon moves on a timer every D_th / 20 = 50 ms, so
                // windows must fire over many of its steps, not all within one (as CI once saw).
                .map(new AllStatesJob.Throttle(20))
                .assignTimestampsAndWatermarks(TestJobs.watermarks());
        if (async) {
            input.keyBy(e -> e.f0).enableAsyncState().window(assigner)
                    .reduce((a, b) -> Tuple3.of(a.f0, Math.max(a.f1, b.f1), a.f2 + b.f2))
                    .addSink(new DiscardingSink<>());
        } else {
            input.keyBy(e -> e.f0)
                    .window(assigner)
                    // Window contents as a list of every element: enough bytes to reach the files.
                    .apply(new WindowFunction<Tuple3<Integer, Long, Long>, Long, Integer, TimeWindow>() {
                        @Override
                        public void apply(Integer key, TimeWindow window, Iterable<Tuple3<Integer, Long, Long>> input,
                                Collector<Long> out) {
                            long n = 0;
                            for (Tuple3<Integer, Long, Long> ignored : input) {
                                n++;
                            }
                            out.collect(n);
                        }
                    })
                    .addSink(new DiscardingSink<>());
        }
        JobClient job = env.executeAsync();
        job.getJobExecutionResult().get();
        return REPORTER.findMetrics(job.getJobID(), "lethe.");
    }

    private static Object gauge(Map<String, Metric> metrics, String suffix) {
        return metrics.entrySet().stream().filter(e -> e.getKey().endsWith(suffix))
                .map(e -> ((Gauge<?>) e.getValue()).getValue()).findFirst()
                .orElseThrow(() -> new AssertionError("no metric " + suffix + " in " + metrics.keySet()));
    }

    @Test
    void tumblingWindowContentsExpireByTheHorizon() throws Exception {
        Map<String, Metric> m = run(TumblingEventTimeWindows.of(Duration.ofMillis(500)));
        String status = (String) gauge(m, "lethe.expiry.window-contents");
        assertTrue(status.startsWith("active"), status);
        assertTrue((Long) gauge(m, "lethe.horizon-advances") > 0, "the horizon never moved");
        assertTrue((Long) gauge(m, "lethe.flushes") > 0, "nothing reached the files");
        assertTrue((Long) gauge(m, "lethe.pages-dropped") > 0, "no page was dropped");
    }

    @Test
    void asynchronousWindowOperatorSaysWhyNot() throws Exception {
        Map<String, Metric> m = run(TumblingEventTimeWindows.of(Duration.ofMillis(500)), true);
        String status = (String) gauge(m, "lethe.expiry.window-contents");
        assertTrue(status.startsWith("off: no TTL; windows of Flink's asynchronous window operator"), status);
    }

    @Test
    void sessionWindowsSayWhyNot() throws Exception {
        Map<String, Metric> m = run(EventTimeSessionWindows.withGap(Duration.ofMillis(150)));
        assertEquals("off: merging (session) windows", gauge(m, "lethe.expiry.window-contents"));
    }
}
