package io.lethe.flink.restore;

import io.lethe.flink.LetheStateBackendFactory;
import io.lethe.flink.testing.TestJobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.api.java.tuple.Tuple3;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExternalizedCheckpointRetention;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.File;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;

/**
 * A job on Lethe stops (fails without restarts) after a checkpoint; a second job restores the
 * retained checkpoint at another parallelism and finishes. Together they produce exactly the
 * windows and totals computed directly from the input.
 */
class LetheRescaleJobTest {
    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER = new MiniClusterExtension(
            new MiniClusterResourceConfiguration.Builder().setNumberTaskManagers(1).setNumberSlotsPerTaskManager(4).build());

    /** Outputs of both jobs (a record may appear twice: after the restore some are recomputed). */
    static final ConcurrentLinkedQueue<String> OUTPUT = new ConcurrentLinkedQueue<>();

    /** Records its input, and in the first job fails once a checkpoint has completed mid-stream. */
    static final class StopAfterCheckpoint extends RichMapFunction<Tuple3<Integer, Long, Long>, Tuple3<Integer, Long, Long>>
            implements CheckpointListener {
        static volatile boolean checkpointed;
        private final boolean stop;
        private int seen;

        StopAfterCheckpoint(boolean stop) {
            this.stop = stop;
        }

        @Override
        public Tuple3<Integer, Long, Long> map(Tuple3<Integer, Long, Long> value) throws Exception {
            if (++seen % 10 == 0 && stop) {
                Thread.sleep(1);  // keep the first job running long enough for checkpoints
            }
            if (stop && seen > 3000 && checkpointed) {
                throw new RuntimeException("stopping the first job after a checkpoint");
            }
            return value;
        }

        @Override
        public void notifyCheckpointComplete(long checkpointId) {
            if (seen > 2000) {
                checkpointed = true;
            }
        }
    }

    private static JobClient start(Configuration conf, int parallelism, boolean stop) throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(parallelism);
        env.fromData(TestJobs.events())
                .map(new StopAfterCheckpoint(stop))
                .assignTimestampsAndWatermarks(TestJobs.watermarks())
                .keyBy(e -> e.f0)
                .window(TumblingEventTimeWindows.of(Duration.ofSeconds(1)))
                .reduce((a, b) -> Tuple3.of(a.f0, Math.min(a.f1, b.f1), a.f2 + b.f2))
                .map(t -> {
                    String line = t.f0 + ":" + (t.f1 / 1000) + ":" + t.f2;
                    OUTPUT.add(line);
                    return line;
                })
                .sinkTo(new DiscardingSink<>());
        return env.executeAsync();
    }

    @ParameterizedTest(name = "incremental={0}")
    @ValueSource(booleans = {false, true})
    void restoreRetainedCheckpointAtAnotherParallelism(boolean incremental, @TempDir Path checkpoints)
            throws Exception {
        OUTPUT.clear();
        StopAfterCheckpoint.checkpointed = false;
        Configuration conf = new Configuration();
        conf.set(StateBackendOptions.STATE_BACKEND, LetheStateBackendFactory.class.getName());
        conf.set(CheckpointingOptions.INCREMENTAL_CHECKPOINTS, incremental);
        conf.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, Duration.ofMillis(100));
        conf.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, checkpoints.toUri().toString());
        conf.set(CheckpointingOptions.EXTERNALIZED_CHECKPOINT_RETENTION,
                ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION);
        conf.set(RestartStrategyOptions.RESTART_STRATEGY, "none");

        JobClient first = start(conf, 2, true);
        assertThrows(ExecutionException.class, () -> first.getJobExecutionResult().get());
        File retained = TestJobs.latestCheckpoint(checkpoints.resolve(first.getJobID().toString()).toFile());
        int afterFirst = OUTPUT.size();

        Configuration resume = new Configuration(conf);
        resume.set(StateRecoveryOptions.SAVEPOINT_PATH, retained.getAbsolutePath());
        JobClient second = start(resume, 3, false);
        second.getJobExecutionResult().get();

        assertTrue(afterFirst > 0, "the first job emitted nothing before it stopped");
        assertTrue(OUTPUT.size() > afterFirst, "the restored job emitted nothing");
        assertEquals(expectedWindows(), new TreeSet<>(OUTPUT), "windows across both jobs (first job stopped after "
                + afterFirst + " of " + OUTPUT.size() + " outputs, restored from " + retained.getName() + ")");
    }

    /** Per user and 1 s window, the sum of values, computed without Flink. */
    private static Set<String> expectedWindows() {
        Map<String, long[]> sums = new TreeMap<>();
        for (Tuple3<Integer, Long, Long> e : TestJobs.events()) {
            sums.computeIfAbsent(e.f0 + ":" + (e.f1 / 1000), k -> new long[1])[0] += e.f2;
        }
        Set<String> lines = new TreeSet<>();
        sums.forEach((k, v) -> lines.add(k + ":" + v[0]));
        return lines;
    }
}
