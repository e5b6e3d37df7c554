package io.lethe.flink.restore;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.lethe.flink.LetheOptions;
import io.lethe.flink.LetheStateBackendFactory;
import io.lethe.flink.testing.AllStatesJob;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Canonical savepoints move between Lethe and Flink's own backends: a job with every kind of keyed
 * state, TTL state, pending and deleted timers and open windows stops with a savepoint on one backend
 * and resumes on another at another parallelism. Savepoints also move between the job with
 * synchronous state and the same job with asynchronous state on Lethe's executor, in both directions
 * (Flink takes no canonical savepoint of asynchronous state, so from there only native ones). Both
 * runs together give exactly the lines of a run without a stop on the HashMap backend.
 */
class SavepointAcrossBackendsTest {
    private static final String LETHE = LetheStateBackendFactory.class.getName();
    /** Lines the first run must have produced before it is stopped: well inside the input. */
    private static final int STOP_AFTER_LINES = 4_000;

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER = new MiniClusterExtension(
            new MiniClusterResourceConfiguration.Builder().setNumberTaskManagers(1).setNumberSlotsPerTaskManager(4).build());

    private static List<String> uninterrupted;

    @BeforeAll
    static void runWithoutStop() throws Exception {
        // Its lines are all different (each names its key and a count, second or window).
        uninterrupted = sorted(AllStatesJob.linesWithoutFailure());
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource({"lethe, rocksdb", "rocksdb, lethe", "lethe, hashmap", "hashmap, lethe"})
    void resumesOnAnotherBackend(String from, String to, @TempDir Path savepoints) throws Exception {
        AllStatesJob.OUTPUT.clear();
        JobClient first = start(backend(from), 2, new AllStatesJob.Throttle());
        waitForLines(first, STOP_AFTER_LINES);
        String savepoint = first.stopWithSavepoint(false, savepoints.toUri().toString(), SavepointFormatType.CANONICAL)
                .get(2, TimeUnit.MINUTES);
        int beforeStop = AllStatesJob.OUTPUT.size();
        assertTrue(beforeStop < uninterrupted.size() / 2, "the first run was stopped only after " + beforeStop
                + " of " + uninterrupted.size() + " lines");

        Configuration resume = backend(to);
        resume.set(StateRecoveryOptions.SAVEPOINT_PATH, savepoint);
        start(resume, 3, AllStatesJob.open()).getJobExecutionResult().get();

        assertSameLines(uninterrupted, sorted(AllStatesJob.OUTPUT), from + " -> " + to + ", stopped after "
                + beforeStop + " lines");
    }

    @ParameterizedTest(name = "{0} state -> {1} state, {2} savepoint, parallelism {3} -> {4}")
    @CsvSource({"sync, async, CANONICAL, 2, 3", "sync, async, NATIVE, 2, 3", "async, sync, NATIVE, 3, 2",
            "async, async, NATIVE, 2, 1"})
    void resumesWithTheOtherKindOfState(String from, String to, SavepointFormatType format, int before, int after,
            @TempDir Path savepoints) throws Exception {
        AllStatesJob.OUTPUT.clear();
        Configuration lethe = backend("lethe");
        lethe.set(LetheOptions.ASYNC_STATE_EXECUTOR, true);
        JobClient first = start(lethe, before, new AllStatesJob.Throttle(), from.equals("async"));
        waitForLines(first, STOP_AFTER_LINES);
        String savepoint = first.stopWithSavepoint(false, savepoints.toUri().toString(), format)
                .get(2, TimeUnit.MINUTES);
        int beforeStop = AllStatesJob.OUTPUT.size();
        assertTrue(beforeStop < uninterrupted.size() / 2, "the first run was stopped only after " + beforeStop
                + " of " + uninterrupted.size() + " lines");

        Configuration resume = new Configuration(lethe);
        resume.set(StateRecoveryOptions.SAVEPOINT_PATH, savepoint);
        start(resume, after, AllStatesJob.open(), to.equals("async")).getJobExecutionResult().get();

        assertSameLines(uninterrupted, sorted(AllStatesJob.OUTPUT), from + " -> " + to + " state (" + format
                + " savepoint), stopped after " + beforeStop + " lines");
    }

    private static Configuration backend(String name) {
        Configuration conf = new Configuration();
        conf.set(StateBackendOptions.STATE_BACKEND, name.equals("lethe") ? LETHE : name);
        return conf;
    }

    private static JobClient start(Configuration conf, int parallelism, AllStatesJob.Gate gate) throws Exception {
        return start(conf, parallelism, gate, false);
    }

    private static JobClient start(Configuration conf, int parallelism, AllStatesJob.Gate gate, boolean asyncState)
            throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(parallelism);
        AllStatesJob.build(env, gate, asyncState);
        return env.executeAsync();
    }

    private static void waitForLines(JobClient job, int lines) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
        while (AllStatesJob.OUTPUT.size() < lines) {
            assertTrue(System.nanoTime() < deadline, "the first run made only " + AllStatesJob.OUTPUT.size() + " lines");
            assertTrue(!job.getJobStatus().get().isGloballyTerminalState(), "the first run ended before it was stopped");
            Thread.sleep(20);
        }
    }

    private static List<String> sorted(Iterable<String> lines) {
        List<String> list = new ArrayList<>();
        lines.forEach(list::add);
        list.sort(null);
        return list;
    }

    /** Equal as multisets; on a difference, names a few lines missing and a few extra. */
    private static void assertSameLines(List<String> expected, List<String> actual, String what) {
        if (expected.equals(actual)) {
            return;
        }
        Map<String, Integer> balance = new HashMap<>();
        expected.forEach(l -> balance.merge(l, 1, Integer::sum));
        actual.forEach(l -> balance.merge(l, -1, Integer::sum));
        List<String> missing = new ArrayList<>();
        List<String> extra = new ArrayList<>();
        balance.forEach((line, n) -> {
            if (n > 0) {
                missing.add(line);
            } else if (n < 0) {
                extra.add(line);
            }
        });
        fail(what + ": " + missing.size() + " lines missing, e.g. " + missing.subList(0, Math.min(5, missing.size()))
                + "; " + extra.size() + " extra, e.g. " + extra.subList(0, Math.min(5, extra.size())));
    }
}
