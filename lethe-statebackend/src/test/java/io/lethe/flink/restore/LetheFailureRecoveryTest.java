package io.lethe.flink.restore;

import io.lethe.flink.LetheStateBackendFactory;
import io.lethe.flink.testing.TestJobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ReducingState;
import org.apache.flink.api.common.state.ReducingStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.api.java.tuple.Tuple3;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExecutionOptions;
import org.apache.flink.configuration.ExternalizedCheckpointRetention;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.checkpoint.Checkpoints;
import org.apache.flink.runtime.checkpoint.OperatorState;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.checkpoint.metadata.CheckpointMetadata;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.runtime.state.IncrementalKeyedStateHandle.HandleAndLocalPath;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.streaming.api.functions.windowing.WindowFunction;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.util.Collector;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.DataInputStream;
import java.io.File;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Failures and damaged checkpoints, on a MiniCluster with Lethe selected by configuration.
 *
 * <p>Repeated failures: a keyed job with value, reducing, list and map state, event-time timers
 * and event-time windows fails several times at moments drawn from a seeded {@link Random} (the
 * seed is printed; replay with {@code -Dlethe.test.seed=<seed>}): on a record, inside a snapshot,
 * while a checkpoint is in flight and on a checkpoint's completion. Its output must be exactly the
 * output computed without Flink. Sinks are at-least-once across restarts, so every result is keyed
 * (a deterministic function of key and window or sequence number): a result emitted again must
 * equal its first emission, and the set of results must equal the expected one.
 *
 * <p>Damaged checkpoints: a retained incremental checkpoint is damaged in one way per case, and a
 * job restored from it must fail while its state backend is restored (not later, when a damaged
 * page happens to be read) with an error naming the damaged file and what is wrong with it.
 */
class LetheFailureRecoveryTest {
    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER = new MiniClusterExtension(
            new MiniClusterResourceConfiguration.Builder().setNumberTaskManagers(1).setNumberSlotsPerTaskManager(4).build());

    /** System property that replays a run's failure plan. */
    static final String SEED_PROPERTY = "lethe.test.seed";

    /** Short, so that the job checkpoints many times between its failures. */
    private static final Duration CHECKPOINT_INTERVAL = Duration.ofMillis(150);

    /** Results by key; a re-emission with another value is recorded in {@link #CONFLICTS}. */
    static final Map<String, String> RESULTS = new ConcurrentHashMap<>();
    static final ConcurrentLinkedQueue<String> CONFLICTS = new ConcurrentLinkedQueue<>();

    @TempDir static Path retainedDirectory;
    private static RetainedCheckpoint retained;

    // ------------------------------------------------------------------------------------------
    //  Failure injection
    // ------------------------------------------------------------------------------------------

    /** Where an injected failure is thrown. */
    enum Moment {
        /** In the map after the source, on a record. */
        RECORD,
        /**
         * In a keyed operator's {@code snapshotState}: the synchronous part of a checkpoint, on the
         * task thread, just before the operator's Lethe backend would snapshot.
         */
        SNAPSHOT,
        /**
         * In a keyed operator on a record, after it took a snapshot whose checkpoint has not
         * completed yet: the backend's asynchronous upload may still run.
         */
        CHECKPOINT_IN_FLIGHT,
        /** In a keyed operator's {@code notifyCheckpointComplete}: the checkpoint just completed is restored. */
        CHECKPOINT_COMPLETE
    }

    /** A planned failure: where, and the input position from which it may happen. */
    record Failure(Moment moment, long position) {}

    /** One of each moment, and two on records: the order and positions come from the seed. */
    static List<Failure> plan(Random random) {
        List<Moment> moments = new ArrayList<>(List.of(Moment.RECORD, Moment.RECORD, Moment.SNAPSHOT,
                Moment.CHECKPOINT_IN_FLIGHT, Moment.CHECKPOINT_COMPLETE));
        Collections.shuffle(moments, random);
        // Up to 80 % of the input: the rest leaves time for the last failure's checkpoint.
        long[] positions = random.longs(moments.size(), TestJobs.RECORDS / 10, TestJobs.RECORDS * 8 / 10)
                .sorted().toArray();
        List<Failure> plan = new ArrayList<>();
        for (int i = 0; i < moments.size(); i++) {
            plan.add(new Failure(moments.get(i), positions[i]));
        }
        return plan;
    }

    /**
     * The failure plan of the running job and its progress, shared by the operators (the
     * MiniCluster runs in this JVM). Failure {@code i} is due once the input reached its position
     * and, in the attempt after the one failure {@code i - 1} ended, a checkpoint completed:
     * otherwise the job could fail again before it checkpointed any progress, and a recovery would
     * restore nothing new. (A checkpoint in flight when a failure struck may still complete in the
     * failing attempt; it does not count, or the next failure could strike that attempt again.)
     */
    static final class Injector {
        static volatile List<Failure> plan = List.of();
        static final AtomicInteger INJECTED = new AtomicInteger();
        static final AtomicLong LAST_COMPLETED_CHECKPOINT = new AtomicLong();
        static final AtomicInteger HIGHEST_ATTEMPT = new AtomicInteger();
        static final ConcurrentLinkedQueue<String> LOG = new ConcurrentLinkedQueue<>();
        static volatile long completedAtLastFailure;
        /** The attempt that the last injected failure ended. */
        static volatile int attemptAtLastFailure;
        /** Records the input map passed in the current attempt (restored from its checkpoint). */
        static volatile long position;

        static void reset(List<Failure> newPlan) {
            plan = List.copyOf(newPlan);
            INJECTED.set(0);
            LAST_COMPLETED_CHECKPOINT.set(0);
            HIGHEST_ATTEMPT.set(0);
            LOG.clear();
            completedAtLastFailure = 0;
            attemptAtLastFailure = -1;
            position = 0;
        }

        /** A subtask of the input map opened in {@code attempt}. */
        static synchronized void attemptStarted(int attempt) {
            if (HIGHEST_ATTEMPT.get() < attempt) {
                HIGHEST_ATTEMPT.set(attempt);
                // Only checkpoints completed from now on count for the next failure.
                completedAtLastFailure = Math.max(completedAtLastFailure, LAST_COMPLETED_CHECKPOINT.get());
            }
        }

        /** The input reached the next failure's position but it has not happened yet. */
        static boolean waiting() {
            int i = INJECTED.get();
            return i < plan.size() && position >= plan.get(i).position();
        }

        static void checkpointCompleted(long checkpointId) {
            LAST_COMPLETED_CHECKPOINT.accumulateAndGet(checkpointId, Math::max);
        }

        /** Throws the next failure if it is due at this moment; one subtask claims it. */
        static void maybeFail(Moment moment, String where) {
            int i = INJECTED.get();
            if (i >= plan.size() || plan.get(i).moment() != moment || position < plan.get(i).position()
                    || HIGHEST_ATTEMPT.get() <= attemptAtLastFailure
                    || LAST_COMPLETED_CHECKPOINT.get() <= completedAtLastFailure) {
                return;
            }
            if (INJECTED.compareAndSet(i, i + 1)) {
                completedAtLastFailure = LAST_COMPLETED_CHECKPOINT.get();
                attemptAtLastFailure = HIGHEST_ATTEMPT.get();
                String what = "injected failure " + (i + 1) + "/" + plan.size() + ": " + moment + " in " + where
                        + " at input position " + position + ", last completed checkpoint " + completedAtLastFailure;
                LOG.add(what);
                throw new RuntimeException(what);
            }
        }
    }

    /**
     * Paces the input (about 4 s for all of it; a millisecond per record while a failure waits for
     * its checkpoint, so the input cannot end first) and throws the {@link Moment#RECORD} failures.
     * Its position is operator state, so that it continues from the restored checkpoint.
     */
    static final class PacedInput extends RichMapFunction<Tuple3<Integer, Long, Long>, Tuple3<Integer, Long, Long>>
            implements CheckpointedFunction, CheckpointListener {
        private transient ListState<Long> positionState;
        private long position;

        @Override
        public void initializeState(FunctionInitializationContext context) throws Exception {
            positionState = context.getOperatorStateStore()
                    .getListState(new ListStateDescriptor<>("position", Long.class));
            for (Long p : positionState.get()) {
                position += p;
            }
            Injector.position = position;
        }

        @Override
        public void open(OpenContext openContext) {
            Injector.attemptStarted(getRuntimeContext().getTaskInfo().getAttemptNumber());
        }

        @Override
        public Tuple3<Integer, Long, Long> map(Tuple3<Integer, Long, Long> value) throws Exception {
            Injector.maybeFail(Moment.RECORD, "the input map");
            Injector.position = ++position;
            // Sleeping (not blocking) keeps the mailbox turning: checkpoints go on meanwhile.
            if (position % 5 == 0 || Injector.waiting()) {
                Thread.sleep(1);
            }
            return value;
        }

        @Override
        public void snapshotState(FunctionSnapshotContext context) throws Exception {
            positionState.update(List.of(position));
        }

        @Override
        public void notifyCheckpointComplete(long checkpointId) {
            Injector.checkpointCompleted(checkpointId);
        }
    }

    /**
     * Per user: a sequence number (value state), the running sum (reducing state) and the last
     * three values (list state) for every event, and the sum of each 250 ms bucket (map state)
     * emitted by an event-time timer. Throws the failures of the checkpoint moments.
     */
    static final class PerUser extends KeyedProcessFunction<Integer, Tuple3<Integer, Long, Long>, Tuple2<String, String>>
            implements CheckpointedFunction, CheckpointListener {
        private transient ValueState<Long> count;
        private transient ReducingState<Long> sum;
        private transient ListState<Long> recent;
        private transient MapState<Long, Long> buckets;
        private long lastSnapshotId;

        @Override
        public void open(OpenContext ctx) {
            count = getRuntimeContext().getState(new ValueStateDescriptor<>("count", Long.class));
            sum = getRuntimeContext().getReducingState(new ReducingStateDescriptor<>("sum", Long::sum, Long.class));
            recent = getRuntimeContext().getListState(new ListStateDescriptor<>("recent", Long.class));
            buckets = getRuntimeContext().getMapState(new MapStateDescriptor<>("buckets", Long.class, Long.class));
        }

        @Override
        public void initializeState(FunctionInitializationContext context) {}

        @Override
        public void processElement(Tuple3<Integer, Long, Long> e, Context ctx, Collector<Tuple2<String, String>> out)
                throws Exception {
            if (lastSnapshotId > Injector.LAST_COMPLETED_CHECKPOINT.get()) {
                Injector.maybeFail(Moment.CHECKPOINT_IN_FLIGHT, "a keyed operator, checkpoint " + lastSnapshotId
                        + " taken but not completed");
            }
            long n = (count.value() == null ? 0 : count.value()) + 1;
            count.update(n);
            sum.add(e.f2);
            List<Long> last = new ArrayList<>();
            Iterable<Long> stored = recent.get();
            if (stored != null) {
                stored.forEach(last::add);
            }
            last.add(e.f2);
            if (last.size() > 3) {
                last.remove(0);
            }
            recent.update(last);
            out.collect(Tuple2.of("event:" + e.f0 + ":" + n, sum.get() + " " + last));

            long bucket = e.f1 / 250;
            Long old = buckets.get(bucket);
            buckets.put(bucket, (old == null ? 0 : old) + e.f2);
            ctx.timerService().registerEventTimeTimer(bucket * 250 + 249);
        }

        @Override
        public void onTimer(long timestamp, OnTimerContext ctx, Collector<Tuple2<String, String>> out)
                throws Exception {
            long bucket = timestamp / 250;
            out.collect(Tuple2.of("bucket:" + ctx.getCurrentKey() + ":" + bucket, String.valueOf(buckets.get(bucket))));
            buckets.remove(bucket);
        }

        @Override
        public void snapshotState(FunctionSnapshotContext context) {
            lastSnapshotId = context.getCheckpointId();
            Injector.maybeFail(Moment.SNAPSHOT, "a keyed operator's snapshot of checkpoint " + lastSnapshotId);
        }

        @Override
        public void notifyCheckpointComplete(long checkpointId) {
            Injector.checkpointCompleted(checkpointId);
            Injector.maybeFail(Moment.CHECKPOINT_COMPLETE, "a keyed operator's completion of checkpoint " + checkpointId);
        }
    }

    /** Keys a window's count and sum by user and window start. */
    static final class WindowResult
            implements WindowFunction<String, Tuple2<String, String>, Integer, TimeWindow> {
        @Override
        public void apply(Integer key, TimeWindow window, Iterable<String> results, Collector<Tuple2<String, String>> out) {
            out.collect(Tuple2.of("window:" + key + ":" + window.getStart(), results.iterator().next()));
        }
    }

    /** Records results; a result seen before must come again with the same value. */
    static final class Recorder implements MapFunction<Tuple2<String, String>, Tuple2<String, String>> {
        @Override
        public Tuple2<String, String> map(Tuple2<String, String> r) {
            String first = RESULTS.putIfAbsent(r.f0, r.f1);
            if (first != null && !first.equals(r.f1)) {
                CONFLICTS.add(r.f0 + " was " + first + ", emitted again as " + r.f1);
            }
            return r;
        }
    }

    private static JobClient start(Configuration conf) throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(2);
        // Input, pacing and watermarks in one chain of parallelism 1: every keyed subtask receives
        // a user's events in input order, so per-event results are deterministic.
        DataStream<Tuple3<Integer, Long, Long>> input = env.fromData(TestJobs.events()).uid("events")
                .map(new PacedInput()).uid("paced-input").setParallelism(1)
                .assignTimestampsAndWatermarks(TestJobs.watermarks()).uid("watermarks").setParallelism(1);
        input.keyBy(e -> e.f0)
                .process(new PerUser()).uid("per-user")
                .map(new Recorder()).uid("record-per-user")
                .sinkTo(new DiscardingSink<>());
        input.keyBy(e -> e.f0)
                .window(TumblingEventTimeWindows.of(Duration.ofSeconds(1)))
                .aggregate(new TestJobs.CountAndSum(), new WindowResult()).uid("windows")
                .map(new Recorder()).uid("record-windows")
                .sinkTo(new DiscardingSink<>());
        return env.executeAsync("failure recovery");
    }

    private static Configuration letheConfig(boolean incremental, Path checkpoints) {
        Configuration conf = new Configuration();
        conf.set(StateBackendOptions.STATE_BACKEND, LetheStateBackendFactory.class.getName());
        conf.set(CheckpointingOptions.INCREMENTAL_CHECKPOINTS, incremental);
        conf.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, CHECKPOINT_INTERVAL);
        conf.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, checkpoints.toUri().toString());
        // Records reach the keyed operators every few milliseconds, not in 100 ms batches (the
        // default): a checkpoint of this small state completes within one batch, and the
        // CHECKPOINT_IN_FLIGHT moment would rarely come.
        conf.set(ExecutionOptions.BUFFER_TIMEOUT, Duration.ofMillis(5));
        return conf;
    }

    /** Per-event results, bucket sums and window aggregates, computed without Flink. */
    static Map<String, String> expectedResults() {
        Map<String, String> expected = new HashMap<>();
        Map<Integer, long[]> countAndSum = new HashMap<>();
        Map<Integer, Deque<Long>> recent = new HashMap<>();
        Map<String, Long> buckets = new HashMap<>();
        Map<String, long[]> windows = new HashMap<>();
        for (Tuple3<Integer, Long, Long> e : TestJobs.events()) {
            long[] cs = countAndSum.computeIfAbsent(e.f0, k -> new long[2]);
            cs[0]++;
            cs[1] += e.f2;
            Deque<Long> last = recent.computeIfAbsent(e.f0, k -> new ArrayDeque<>());
            last.addLast(e.f2);
            if (last.size() > 3) {
                last.removeFirst();
            }
            expected.put("event:" + e.f0 + ":" + cs[0], cs[1] + " " + new ArrayList<>(last));
            buckets.merge("bucket:" + e.f0 + ":" + (e.f1 / 250), e.f2, Long::sum);
            long[] w = windows.computeIfAbsent("window:" + e.f0 + ":" + (e.f1 / 1000 * 1000), k -> new long[2]);
            w[0]++;
            w[1] += e.f2;
        }
        buckets.forEach((k, v) -> expected.put(k, String.valueOf(v)));
        windows.forEach((k, v) -> expected.put(k, v[0] + "/" + v[1]));
        return expected;
    }

    /** No conflicting re-emission, and exactly the expected results; says briefly what differs. */
    private static void assertResults(Map<String, String> expected, String context) {
        List<String> conflicts = new ArrayList<>(CONFLICTS);
        assertTrue(conflicts.isEmpty(), context + ": " + conflicts.size() + " results were emitted again with another"
                + " value, e.g. " + conflicts.subList(0, Math.min(5, conflicts.size())));
        if (expected.equals(RESULTS)) {
            return;
        }
        Map<String, String> missing = new TreeMap<>();
        Map<String, String> wrong = new TreeMap<>();
        Map<String, String> unexpected = new TreeMap<>();
        expected.forEach((k, v) -> {
            String actual = RESULTS.get(k);
            if (actual == null) {
                missing.put(k, v);
            } else if (!actual.equals(v)) {
                wrong.put(k, actual + " instead of " + v);
            }
        });
        RESULTS.forEach((k, v) -> {
            if (!expected.containsKey(k)) {
                unexpected.put(k, v);
            }
        });
        fail(context + ": " + RESULTS.size() + " results, " + expected.size() + " expected; " + missing.size()
                + " missing " + first(missing) + ", " + wrong.size() + " wrong " + first(wrong) + ", "
                + unexpected.size() + " unexpected " + first(unexpected));
    }

    private static String first(Map<String, String> m) {
        return m.entrySet().stream().limit(5).toList().toString();
    }

    @ParameterizedTest(name = "incremental={0}")
    @ValueSource(booleans = {false, true})
    void repeatedFailuresAtRandomMomentsGiveExactlyTheExpectedOutput(boolean incremental, @TempDir Path checkpoints)
            throws Exception {
        long seed = Long.getLong(SEED_PROPERTY, new Random().nextLong());
        List<Failure> plan = plan(new Random(seed));
        String context = "seed " + seed + " (replay with -D" + SEED_PROPERTY + "=" + seed + "), incremental="
                + incremental + ", plan " + plan;
        System.out.println("LetheFailureRecoveryTest: " + context);
        Injector.reset(plan);
        RESULTS.clear();
        CONFLICTS.clear();

        Configuration conf = letheConfig(incremental, checkpoints);
        conf.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
        // Two spare attempts: an unplanned failure shows up as a wrong restart count below.
        conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, plan.size() + 2);
        conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ofMillis(50));
        long started = System.nanoTime();
        start(conf).getJobExecutionResult().get(3, TimeUnit.MINUTES);
        System.out.println("LetheFailureRecoveryTest: incremental=" + incremental + " finished in "
                + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started) + " ms: " + Injector.LOG);

        assertEquals(plan.size(), Injector.INJECTED.get(), "failures injected; " + context + "; " + Injector.LOG);
        assertEquals(plan.size(), Injector.HIGHEST_ATTEMPT.get(),
                "restarts (one per injected failure, no other failure); " + context + "; " + Injector.LOG);
        assertResults(expectedResults(), context);
    }

    // ------------------------------------------------------------------------------------------
    //  Damaged checkpoints
    // ------------------------------------------------------------------------------------------

    /** A retained checkpoint of a job stopped mid-input, and what its first job emitted. */
    record RetainedCheckpoint(File directory, List<IncrementalRemoteKeyedStateHandle> handles,
            Map<String, String> firstJobResults) {}

    /**
     * Runs a job with incremental checkpoints that are retained, and stops it by a failure without
     * restarts once a checkpoint completed a quarter into the input. Every checkpointed piece is a
     * file of its own (no inlining into {@code _metadata}), so each can be damaged on its own.
     */
    private static synchronized RetainedCheckpoint retainedCheckpoint() throws Exception {
        if (retained != null) {
            return retained;
        }
        Injector.reset(List.of(new Failure(Moment.RECORD, TestJobs.RECORDS / 4)));
        RESULTS.clear();
        CONFLICTS.clear();
        Configuration conf = retainingConfig();
        conf.set(RestartStrategyOptions.RESTART_STRATEGY, "none");
        JobClient job = start(conf);
        assertThrows(ExecutionException.class, () -> job.getJobExecutionResult().get(3, TimeUnit.MINUTES));
        assertEquals(1, Injector.INJECTED.get(), "the first job must stop by the injected failure");
        File checkpoint = TestJobs.latestCheckpoint(retainedDirectory.resolve(job.getJobID().toString()).toFile());
        CheckpointMetadata metadata;
        try (DataInputStream in = new DataInputStream(Files.newInputStream(checkpoint.toPath().resolve("_metadata")))) {
            metadata = Checkpoints.loadCheckpointMetadata(in, LetheFailureRecoveryTest.class.getClassLoader(),
                    checkpoint.getAbsolutePath());
        }
        List<IncrementalRemoteKeyedStateHandle> handles = new ArrayList<>();
        for (OperatorState operator : metadata.getOperatorStates()) {
            for (OperatorSubtaskState subtask : operator.getStates()) {
                for (KeyedStateHandle h : subtask.getManagedKeyedState()) {
                    handles.add((IncrementalRemoteKeyedStateHandle) h);
                }
            }
        }
        // Two keyed operators (per-user state, windows) of two subtasks each.
        assertEquals(4, handles.size(), "keyed state handles in " + checkpoint);
        retained = new RetainedCheckpoint(checkpoint, handles, new HashMap<>(RESULTS));
        return retained;
    }

    private static Configuration retainingConfig() {
        Configuration conf = letheConfig(true, retainedDirectory);
        conf.set(CheckpointingOptions.EXTERNALIZED_CHECKPOINT_RETENTION,
                ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION);
        conf.set(CheckpointingOptions.FS_SMALL_FILE_THRESHOLD, MemorySize.ZERO);
        return conf;
    }

    /** Restores a job from the retained checkpoint, without restarts, and waits for its end. */
    private static void restoreFromRetained(RetainedCheckpoint checkpoint) throws Exception {
        Injector.reset(List.of());
        Configuration conf = retainingConfig();
        conf.set(RestartStrategyOptions.RESTART_STRATEGY, "none");
        conf.set(StateRecoveryOptions.SAVEPOINT_PATH, checkpoint.directory().getAbsolutePath());
        start(conf).getJobExecutionResult().get(3, TimeUnit.MINUTES);
    }

    @Test
    void undamagedRetainedCheckpointRestoresToExactlyTheExpectedOutput() throws Exception {
        RetainedCheckpoint checkpoint = retainedCheckpoint();
        RESULTS.clear();
        CONFLICTS.clear();
        RESULTS.putAll(checkpoint.firstJobResults());
        restoreFromRetained(checkpoint);
        assertResults(expectedResults(), "first job and the job restored from " + checkpoint.directory());
    }

    /** A kind of damage, the file it hits and the words the restore error must contain. */
    enum Damage {
        FLIPPED_TABLE_BYTES("checksum mismatch"),
        TRUNCATED_TABLE("truncated"),
        MISSING_TABLE("missing"),
        DAMAGED_MANIFEST("checksum mismatch"),
        DAMAGED_LETHE_METADATA("checksum mismatch");

        final String problem;

        Damage(String problem) {
            this.problem = problem;
        }
    }

    /** A file of the checkpoint: where it is, and its name in the engine directory (null: Lethe's metadata). */
    record Target(Path path, String engineName) {}

    private static Target target(RetainedCheckpoint checkpoint, Damage damage) {
        // The largest table: its middle is far from the footer and index, inside a page.
        HandleAndLocalPath table = checkpoint.handles().stream()
                .flatMap(h -> h.getSharedState().stream())
                .filter(f -> f.getLocalPath().endsWith(".sst"))
                .max(Comparator.comparingLong(f -> f.getHandle().getStateSize()))
                .orElseThrow(() -> new AssertionError("no table in the retained checkpoint"));
        IncrementalRemoteKeyedStateHandle owner = checkpoint.handles().stream()
                .filter(h -> h.getSharedState().contains(table)).findFirst().orElseThrow();
        switch (damage) {
            case DAMAGED_MANIFEST:
                HandleAndLocalPath manifest = owner.getPrivateState().stream()
                        .filter(f -> f.getLocalPath().startsWith("MANIFEST")).findFirst()
                        .orElseThrow(() -> new AssertionError("no manifest in " + owner));
                return new Target(path(manifest.getHandle()), manifest.getLocalPath());
            case DAMAGED_LETHE_METADATA:
                return new Target(path(owner.getMetaDataStateHandle()), null);
            default:
                return new Target(path(table.getHandle()), table.getLocalPath());
        }
    }

    private static Path path(StreamStateHandle handle) {
        assertTrue(handle instanceof FileStateHandle, "not a file: " + handle);
        return new File(((FileStateHandle) handle).getFilePath().toUri()).toPath();
    }

    private static void apply(Damage damage, Path file) throws IOException {
        long length = Files.size(file);
        switch (damage) {
            case TRUNCATED_TABLE:
                try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
                    f.setLength(length / 2);
                }
                break;
            case MISSING_TABLE:
                Files.delete(file);
                break;
            default:
                // Eight bytes in the middle, each with every bit flipped.
                try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
                    byte[] b = new byte[8];
                    f.seek(length / 2);
                    f.readFully(b);
                    for (int i = 0; i < b.length; i++) {
                        b[i] = (byte) ~b[i];
                    }
                    f.seek(length / 2);
                    f.write(b);
                }
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Damage.class)
    void damagedCheckpointFailsAtRestoreNamingTheFile(Damage damage) throws Exception {
        RetainedCheckpoint checkpoint = retainedCheckpoint();
        Target target = target(checkpoint, damage);
        byte[] original = Files.readAllBytes(target.path());
        ExecutionException e;
        try {
            apply(damage, target.path());
            e = assertThrows(ExecutionException.class, () -> restoreFromRetained(checkpoint),
                    "a job restored from a checkpoint with a " + damage + " (" + target + ") must fail");
        } finally {
            Files.write(target.path(), original);
        }
        // The backend's restore failed, not a later read of a damaged page.
        assertNotNull(causeWithMessage(e, "Could not restore keyed state backend"),
                () -> "the job failed, but not while restoring its keyed state backend: " + chain(e));
        String fileName = target.path().getFileName().toString();
        Throwable clear = null;
        for (Throwable t = e; t != null; t = t.getCause()) {
            String m = String.valueOf(t.getMessage());
            if (t instanceof IOException && m.contains(fileName) && m.contains(damage.problem)
                    && (target.engineName() == null || m.contains(target.engineName()))) {
                clear = t;
            }
        }
        assertNotNull(clear, () -> "no IOException naming " + fileName
                + (target.engineName() == null ? "" : " (" + target.engineName() + ")") + " and saying '"
                + damage.problem + "' in " + chain(e));
        System.out.println("LetheFailureRecoveryTest: " + damage + ": " + clear);
    }

    private static Throwable causeWithMessage(Throwable e, String text) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (String.valueOf(t.getMessage()).contains(text)) {
                return t;
            }
        }
        return null;
    }

    private static String chain(Throwable e) {
        StringBuilder b = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause()) {
            b.append("\n  caused by ").append(t);
        }
        return b.toString();
    }
}
