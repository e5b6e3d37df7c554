package io.lethe.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lethe.examples.Click;
import io.lethe.examples.ClickProducer;
import io.lethe.examples.ClickStream;
import io.lethe.examples.ClickWindows;
import io.lethe.examples.KafkaIo;
import io.lethe.examples.PageViews;
import io.lethe.examples.TtlDedup;
import io.lethe.flink.LetheStateBackendFactory;

import org.apache.flink.api.common.JobStatus;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * End to end against a real Kafka broker ({@link KafkaBroker}): clicks from a Kafka topic, a TTL'd
 * de-duplication, event-time windows, results into an exactly-once Kafka sink, all state on Lethe.
 * The output read with {@code read_committed} must equal, record for record, the plain computation
 * of the same clicks ({@link ClickStream#referencePageViews}): after a clean run, after a task
 * failure in the middle of the run, and across a stop with savepoint and a resume at another
 * parallelism.
 */
class KafkaPipelineTest {
    private static final int PARTITIONS = 4;
    /** 2,000 clicks per event second, 10 % of them repeats, 40 pages, 500 users. */
    private static final ClickStream STREAM = new ClickStream(2_000, 500, 40, 10, ClickStream.DEFAULT_START_MILLIS);
    /** 60 s of event time: 12 windows of 5 s. */
    private static final long CLICKS = 120_000;
    private static final Duration WINDOW = Duration.ofSeconds(5);
    /** Long enough that no repeat outlives it: the result does not depend on the wall clock. */
    private static final Duration TTL = Duration.ofHours(1);

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER = new MiniClusterExtension(new MiniClusterResourceConfiguration.Builder()
            .setNumberTaskManagers(1).setNumberSlotsPerTaskManager(4).build());

    @RegisterExtension
    static final KafkaBrokerExtension KAFKA = new KafkaBrokerExtension();

    /** The job: Kafka, de-duplication (TTL state), windows, exactly-once Kafka sink. */
    private static JobClient start(Configuration conf, int parallelism, String name, boolean bounded,
            boolean injectFailure) throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(parallelism);
        String servers = KAFKA.broker().bootstrapServers();
        DataStream<Click> clicks = KafkaIo.clicks(env, servers, name + "-in", name, bounded);
        if (injectFailure) {
            clicks = clicks.map(new SlowFirstAttempt()).name("slow first attempt").uid("slow");
        }
        DataStream<String> results = ClickWindows.pageViews(TtlDedup.dedup(clicks, TTL), WINDOW).map(PageViews::toCsv);
        if (injectFailure) {
            results = results.map(new FailAfterUncommittedOutput()).name("fail once").uid("fail-once");
        }
        results.sinkTo(KafkaIo.exactlyOnceSink(servers, name + "-out", name, Duration.ofMinutes(5)))
                .uid("results-sink");
        return env.executeAsync(name);
    }

    private static Configuration lethe(Path dir) {
        Configuration conf = new Configuration();
        conf.set(StateBackendOptions.STATE_BACKEND, LetheStateBackendFactory.class.getName());
        conf.setString("state.backend.lethe.localdir", dir.resolve("local").toString());
        conf.set(CheckpointingOptions.INCREMENTAL_CHECKPOINTS, true);
        conf.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, dir.resolve("checkpoints").toUri().toString());
        conf.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, Duration.ofMillis(300));
        conf.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
        conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, 3);
        conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ofMillis(200));
        return conf;
    }

    @Test
    void outputEqualsThePlainComputation(@TempDir Path dir) throws Exception {
        String name = "clean";
        createTopics(name);
        produceAll(name);
        start(lethe(dir), 2, name, true, false).getJobExecutionResult().get(3, TimeUnit.MINUTES);
        OutputLines.assertSame(expected(), KAFKA.broker().readDecided(name + "-out"), offsets(name));
    }

    @Test
    void aTaskFailureInTheMiddleChangesNothing(@TempDir Path dir) throws Exception {
        String name = "failure";
        createTopics(name);
        produceAll(name);
        FailAfterUncommittedOutput.failedAfter = 0;
        start(lethe(dir), 2, name, true, true).getJobExecutionResult().get(3, TimeUnit.MINUTES);
        assertTrue(FailAfterUncommittedOutput.failedAfter > 0, "no failure was injected");
        OutputLines.assertSame(expected(), KAFKA.broker().readDecided(name + "-out"), "after a failure that followed "
                + FailAfterUncommittedOutput.failedAfter + " results not yet covered by a checkpoint; " + offsets(name));
    }

    @ParameterizedTest
    @EnumSource(value = SavepointFormatType.class, names = {"CANONICAL", "NATIVE"})
    void stopWithSavepointAndResumeAtAnotherParallelism(SavepointFormatType format, @TempDir Path dir)
            throws Exception {
        String name = "rescale-" + format.name().toLowerCase();
        createTopics(name);
        ClickProducer.produce(KAFKA.broker().bootstrapServers(), name + "-in", STREAM, 0, CLICKS / 2, 0);
        Configuration conf = lethe(dir);
        JobClient first = start(conf, 2, name, false, false);
        // Some windows fired and were committed before the stop.
        int before = awaitCommitted(name + "-out", 1, Duration.ofMinutes(2));
        String savepoint = first.stopWithSavepoint(false, dir.resolve("savepoints").toUri().toString(), format)
                .get(2, TimeUnit.MINUTES);
        int atStop = KAFKA.broker().readDecided(name + "-out").size();

        ClickProducer.produce(KAFKA.broker().bootstrapServers(), name + "-in", STREAM, CLICKS / 2, CLICKS, 0);
        endMarkers(name + "-in");
        Configuration resume = new Configuration(conf);
        resume.set(StateRecoveryOptions.SAVEPOINT_PATH, savepoint);
        JobClient second = start(resume, 3, name, false, false);
        try {
            List<String> expected = expected();
            awaitCommitted(name + "-out", expected.size(), Duration.ofMinutes(2));
            // A few more checkpoints: nothing may follow.
            Thread.sleep(1_500);
            assertEquals(JobStatus.RUNNING, second.getJobStatus().get());
            OutputLines.assertSame(expected, KAFKA.broker().readCommitted(name + "-out"), before
                    + " results committed before the stop, " + atStop + " at the stop (savepoint " + savepoint + ")");
            assertTrue(atStop > 0 && atStop < expected.size(), atStop + " of " + expected.size() + " at the stop");
        } finally {
            cancelAndAwaitTheEnd(second);
        }
    }

    /**
     * Cancels a job and waits until it has ended: the cancel's future completes once the request
     * is taken, while the job's tasks may still write checkpoint files into the test's directory.
     */
    private static void cancelAndAwaitTheEnd(JobClient job) throws Exception {
        job.cancel().get(1, TimeUnit.MINUTES);
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
        JobStatus status;
        while (!(status = job.getJobStatus().get(1, TimeUnit.MINUTES)).isGloballyTerminalState()) {
            assertTrue(System.nanoTime() < deadline, "the job is still " + status + " a minute after its cancel");
            Thread.sleep(50);
        }
    }

    /**
     * One click per partition an hour of event time after the stream: each partition's watermark
     * passes every window of the stream, so an unbounded job fires them all. Their own windows
     * never fire.
     */
    private static void endMarkers(String topic) throws Exception {
        long end = STREAM.click(CLICKS - 1).timestamp + Duration.ofHours(1).toMillis();
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, KAFKA.broker().bootstrapServers(),
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName(),
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName()))) {
            for (int p = 0; p < PARTITIONS; p++) {
                producer.send(new ProducerRecord<>(topic, p, null, new Click(-1 - p, end, 0, 0).toCsv())).get();
            }
        }
    }

    /** All clicks to the test's input topic, which then holds exactly them. */
    private static void produceAll(String name) throws Exception {
        ClickProducer.produce(KAFKA.broker().bootstrapServers(), name + "-in", STREAM, 0, CLICKS, 0);
        assertEquals(CLICKS, KAFKA.broker().offsets(name + "-in"), "records on " + name + "-in");
    }

    /**
     * What the topics of a bounded run hold, for a failure's message: tells a job that read nothing
     * from one whose transactions were aborted or never written.
     */
    private static String offsets(String name) throws Exception {
        return "the input topic's end offsets sum to " + KAFKA.broker().offsets(name + "-in") + ", the output topic's to "
                + KAFKA.broker().offsets(name + "-out") + " (records committed, aborted or open, and markers)"
                + committerErrors();
    }

    /**
     * The first lines the Kafka sink's committer logged at WARN or above (the test log, see
     * log4j2-test.properties): it drops a transaction it cannot commit for a known reason (fenced,
     * aborted, unknown producer) with a log line only.
     */
    private static String committerErrors() throws IOException {
        Path log = Path.of("target/integration-tests.log");
        if (!Files.exists(log)) {
            return "";
        }
        try (Stream<String> lines = Files.lines(log)) {
            List<String> errors = lines.filter(l -> l.contains(" KafkaCommitter - ")).limit(3)
                    .map(l -> l.length() > 400 ? l.substring(0, 400) + "..." : l).toList();
            return errors.isEmpty() ? "; the committer logged nothing" : "; the committer logged: " + errors;
        }
    }

    private static void createTopics(String name) throws Exception {
        KAFKA.broker().createInputAndOutput(name, PARTITIONS);
    }

    /** The expected lines, sorted: windows over the clicks without their repeats. */
    private static List<String> expected() {
        return STREAM.referencePageViewLines(CLICKS, WINDOW, true);
    }

    /** Waits until {@code topic} holds at least {@code count} committed records; returns how many. */
    private static int awaitCommitted(String topic, int count, Duration timeout) throws InterruptedException {
        return KAFKA.broker().awaitCommitted(topic, count, timeout, () -> "");
    }

    /** Slows the first attempt down so that checkpoints complete while the stream runs. */
    static final class SlowFirstAttempt extends RichMapFunction<Click, Click> {
        private transient boolean first;
        private transient long seen;

        @Override
        public void open(OpenContext context) {
            first = getRuntimeContext().getTaskInfo().getAttemptNumber() == 0;
        }

        @Override
        public Click map(Click click) throws InterruptedException {
            if (first && ++seen % 20 == 0) {
                Thread.sleep(1);
            }
            return click;
        }
    }

    /**
     * Fails the job once, in the first attempt, right after several results went to the sink since
     * the last completed checkpoint: results that a sink without transactions would have published
     * and the restored job emits again.
     */
    static final class FailAfterUncommittedOutput extends RichMapFunction<String, String> implements CheckpointListener {
        static volatile int failedAfter;
        private transient boolean first;
        private transient boolean checkpointed;
        private transient int sinceCheckpoint;

        @Override
        public void open(OpenContext context) {
            first = getRuntimeContext().getTaskInfo().getAttemptNumber() == 0;
        }

        @Override
        public String map(String result) throws InterruptedException {
            if (first && checkpointed && ++sinceCheckpoint >= 5 && failedAfter == 0) {
                failedAfter = sinceCheckpoint;
                Thread.sleep(200);  // the results reach the broker (in an open transaction)
                throw new RuntimeException("injected failure after " + sinceCheckpoint + " results since the last checkpoint");
            }
            return result;
        }

        @Override
        public void notifyCheckpointComplete(long checkpointId) {
            checkpointed = true;
            sinceCheckpoint = 0;
        }
    }

}
