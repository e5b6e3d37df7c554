package io.lethe.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lethe.examples.Click;
import io.lethe.examples.ClickProducer;
import io.lethe.examples.ClickStream;
import io.lethe.examples.ClickWindows;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.rest.messages.checkpoints.CheckpointingStatistics.RestoredCheckpointStatistics;
import org.apache.flink.runtime.rest.messages.job.JobDetailsInfo;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

/**
 * The example job {@link ClickWindows} as a user runs it on a Flink cluster: submitted from its jar
 * ({@code examples/target/lethe-examples.jar}) through the REST API to a standalone cluster of
 * separate processes ({@link FlinkProcessCluster}: a JobManager and two TaskManagers of two slots,
 * Lethe in their class path as in a distribution's {@code lib/}, configured from {@code
 * examples/conf/config.yaml}), reading clicks from Kafka and writing page views exactly once to
 * Kafka. The job is unbounded; one click per partition far ahead in event time makes it fire every
 * window of the stream. The output read with {@code read_committed} must equal, record for record,
 * the plain computation of the clicks ({@link ClickStream#referencePageViews}, as in {@link
 * ExampleJobsOnKafkaTest}):
 *
 * <ul>
 *   <li>after a TaskManager is killed with {@code kill -9} while clicks arrive, the job restoring
 *       its last checkpoint on the remaining TaskManager and a new one;
 *   <li>across a stop with a savepoint at parallelism 4 and a resume at 2, and another stop and a
 *       resume at 3 (canonical and native savepoints).
 * </ul>
 *
 * <p>The TaskManagers' logs carry Lethe's engine metrics and expiry gauges ({@link LogReporter}).
 */
class ClusterFailoverAndRescaleTest {
    private static final int PARTITIONS = 4;
    /**
     * 2,000 clicks per event second, 10 % of them repeats, 50 pages, 1,000 users. Event time starts
     * at the wall clock: the results carry their window's time as Kafka timestamp, and a broker
     * rolls and deletes log segments by record time (7 days by default), so results stamped long
     * ago could be gone before they are read.
     */
    private static final ClickStream STREAM = new ClickStream(2_000, 1_000, 50, 10,
            System.currentTimeMillis() / 1000 * 1000);
    /** 30 s of event time: 15 windows of 2 s, about 750 results. */
    private static final long CLICKS = 60_000;
    private static final Duration WINDOW = Duration.ofSeconds(2);
    private static final Path JOB_JAR = Path.of("..", "examples", "target", "lethe-examples.jar");
    private static final Path EXAMPLE_CONF = Path.of("..", "examples", "conf");
    private static final int SLOTS = FlinkProcessCluster.TASK_MANAGERS * FlinkProcessCluster.SLOTS_PER_TASK_MANAGER;

    @TempDir
    static Path brokerDir;
    private static KafkaBroker broker;
    private static FlinkProcessCluster cluster;
    private final List<JobID> jobs = new ArrayList<>();

    @BeforeAll
    static void startBrokerAndCluster() throws Exception {
        broker = KafkaBroker.start(brokerDir);
        String run = LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss"));
        cluster = FlinkProcessCluster.start(Path.of("target", "process-clusters", "failover-and-rescale-" + run),
                EXAMPLE_CONF, Map.of());
    }

    @AfterAll
    static void stopClusterAndBroker() throws Exception {
        try {
            if (cluster != null) {
                cluster.close();
            }
        } finally {
            if (broker != null) {
                broker.close();
            }
        }
    }

    /** A test that failed half-way leaves no job behind to hold the next test's slots. */
    @AfterEach
    void cancelJobsStillRunning() throws Exception {
        for (JobID job : jobs) {
            JobStatus status = cluster.client().getJobStatus(job).get(30, TimeUnit.SECONDS);
            if (!status.isGloballyTerminalState()) {
                cluster.cancel(job);
            }
        }
    }

    @Test
    void aTaskManagerKilledWhileClicksArriveChangesNothing() throws Exception {
        String name = "failover";
        createTopics(name);
        ClickProducer.produce(broker.bootstrapServers(), name + "-in", STREAM, 0, CLICKS / 3, 0);
        cluster.awaitFreeSlots(SLOTS, Duration.ofMinutes(1));
        JobID job = submit(name, SLOTS, null);
        cluster.awaitCompletedCheckpoints(job, 1, Duration.ofMinutes(1));
        assertEquals("LetheStateBackend", cluster.stateBackend(job));
        int before = awaitCommitted(name + "-out", 1, Duration.ofMinutes(1));

        // The other two thirds arrive over 4 s; a TaskManager dies 1 s into them.
        CompletableFuture<Void> rest = CompletableFuture.runAsync(() -> produce(name + "-in", CLICKS / 3, CLICKS, 10_000));
        Thread.sleep(1_000);
        cluster.killTaskManager();
        cluster.startTaskManager();
        rest.get(1, TimeUnit.MINUTES);
        endMarkers(name + "-in");

        List<String> expected = expected();
        awaitCommitted(name + "-out", expected.size(), Duration.ofMinutes(2));
        // A few more checkpoints: nothing may follow.
        Thread.sleep(2_500);
        OutputLines.assertSame(expected, broker.readCommitted(name + "-out"),
                before + " results were committed before the kill; logs in " + cluster.logDir());
        RestoredCheckpointStatistics restored = cluster.checkpoints(job).getLatestCheckpoints()
                .getRestoredCheckpointStatistics();
        assertNotNull(restored, "the job never restored a checkpoint: the kill did not reach it");
        assertFalse(restored.isSavepoint(), "restored " + restored.getExternalPath());
        assertEquals(JobStatus.RUNNING, cluster.client().getJobStatus(job).get());

        assertLetheMetricsInTaskManagerLogs();
    }

    @Test
    void stopWithSavepointAndResumeAtParallelismTwoThenThree() throws Exception {
        String name = "rescale";
        createTopics(name);
        String out = name + "-out";
        long third = CLICKS / 3;
        ClickProducer.produce(broker.bootstrapServers(), name + "-in", STREAM, 0, third, 0);
        cluster.awaitFreeSlots(SLOTS, Duration.ofMinutes(1));

        JobID first = submit(name, SLOTS, null);
        awaitCommitted(out, 1, Duration.ofMinutes(1));
        String canonical = stopWithSavepoint(first, SavepointFormatType.CANONICAL);
        int atFirstStop = broker.readDecided(out).size();
        System.out.println(atFirstStop + " results committed at the stop at parallelism 4");

        ClickProducer.produce(broker.bootstrapServers(), name + "-in", STREAM, third, 2 * third, 0);
        JobID second = submit(name, 2, canonical);
        awaitCommitted(out, atFirstStop + 1, Duration.ofMinutes(1));
        assertParallelism(second, 2);
        String nativeSavepoint = stopWithSavepoint(second, SavepointFormatType.NATIVE);
        int atSecondStop = broker.readDecided(out).size();
        System.out.println(atSecondStop + " results committed at the stop at parallelism 2");

        ClickProducer.produce(broker.bootstrapServers(), name + "-in", STREAM, 2 * third, CLICKS, 0);
        endMarkers(name + "-in");
        JobID last = submit(name, 3, nativeSavepoint);
        List<String> expected = expected();
        awaitCommitted(out, expected.size(), Duration.ofMinutes(2));
        assertParallelism(last, 3);
        assertEquals("LetheStateBackend", cluster.stateBackend(last));
        // A few more checkpoints: nothing may follow.
        Thread.sleep(2_500);
        OutputLines.assertSame(expected, broker.readCommitted(out), atFirstStop
                + " results committed at the stop at parallelism 4 (" + canonical + "), " + atSecondStop + " at the stop at parallelism 2 (" + nativeSavepoint + ")");
        assertTrue(0 < atFirstStop && atFirstStop < atSecondStop && atSecondStop < expected.size(),
                "results at the stops: " + atFirstStop + ", " + atSecondStop + " of " + expected.size());
        RestoredCheckpointStatistics restored = cluster.checkpoints(last).getLatestCheckpoints()
                .getRestoredCheckpointStatistics();
        assertNotNull(restored, "the resumed job restored nothing");
        assertTrue(restored.isSavepoint(), "restored " + restored.getExternalPath());
    }

    /** Submits ClickWindows from its jar with the Kafka options, as {@code flink run} would. */
    private JobID submit(String name, int parallelism, String savepoint) throws Exception {
        JobID job = cluster.submit(JOB_JAR, ClickWindows.class.getName(), parallelism, savepoint,
                "--bootstrap-servers", broker.bootstrapServers(),
                "--input-topic", name + "-in", "--output-topic", name + "-out",
                "--group-id", "lethe-" + name, "--transactional-id-prefix", "lethe-" + name,
                "--window", WINDOW.toSeconds() + " s");
        jobs.add(job);
        System.out.println("Submitted " + name + " at parallelism " + parallelism + " as job " + job
                + (savepoint == null ? "" : " from " + savepoint));
        cluster.awaitJobStatus(job, JobStatus.RUNNING, Duration.ofMinutes(1));
        return job;
    }

    /** Stops the job with a savepoint (results up to it committed) and waits until it finished. */
    private String stopWithSavepoint(JobID job, SavepointFormatType format) throws Exception {
        String path = cluster.client().stopWithSavepoint(job, false, null, format).get(2, TimeUnit.MINUTES);
        cluster.awaitJobStatus(job, JobStatus.FINISHED, Duration.ofMinutes(1));
        return path;
    }

    private void assertParallelism(JobID job, int parallelism) throws Exception {
        for (JobDetailsInfo.JobVertexDetailsInfo vertex : cluster.client().getJobDetails(job).get().getJobVertexInfos()) {
            assertEquals(parallelism, vertex.getParallelism(), vertex.getName());
        }
    }

    /**
     * Lethe registers its engine gauges under the keyed operator's group {@code lethe} and the
     * expiry of each state under {@code lethe.expiry}; the reporter wrote them to the TaskManagers'
     * logs while the job ran.
     */
    private static void assertLetheMetricsInTaskManagerLogs() throws IOException {
        List<String> lines = new ArrayList<>();
        for (Path log : cluster.taskManagerLogs()) {
            new String(Files.readAllBytes(log), StandardCharsets.UTF_8).lines()
                    .filter(l -> l.contains(" metric ") && l.contains(".lethe.")).forEach(lines::add);
        }
        String where = " in the TaskManager logs " + cluster.taskManagerLogs();
        assertFalse(lines.isEmpty(), "no Lethe metric" + where);
        // The window operator's contents expire by Lethe's horizon.
        assertTrue(lines.stream().anyMatch(l -> l.contains(".lethe.expiry.window-contents = active")),
                "no active expiry gauge for window-contents" + where + ":\n" + sample(lines, ".lethe.expiry."));
        for (String gauge : List.of("memtable-bytes", "entries", "pages-dropped", "horizon-advances",
                "oldest-tombstone-age-ms", "user-bytes-written")) {
            assertTrue(lines.stream().anyMatch(l -> l.contains(".lethe." + gauge + " = ")), "no gauge " + gauge + where);
        }
        // The gauges follow the engines: the windows' clicks were written.
        assertTrue(lines.stream().filter(l -> l.contains(".lethe.user-bytes-written = "))
                        .anyMatch(l -> Long.parseLong(l.substring(l.lastIndexOf(" = ") + 3).trim()) > 0),
                "user-bytes-written stayed 0" + where + ":\n" + sample(lines, ".lethe.user-bytes-written"));
    }

    private static String sample(List<String> lines, String containing) {
        return String.join("\n", lines.stream().filter(l -> l.contains(containing)).limit(10).toList());
    }

    private static void createTopics(String name) throws Exception {
        broker.createInputAndOutput(name, PARTITIONS);
    }

    private static void produce(String topic, long from, long to, long ratePerSecond) {
        try {
            ClickProducer.produce(broker.bootstrapServers(), topic, STREAM, from, to, ratePerSecond);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CompletionException(e);
        }
    }

    /**
     * One click per partition an hour of event time after the stream: each partition's watermark
     * passes every window of the stream, so the unbounded job fires them all. Their own windows
     * never fire.
     */
    private static void endMarkers(String topic) throws Exception {
        long end = STREAM.click(CLICKS - 1).timestamp + Duration.ofHours(1).toMillis();
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers(),
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName(),
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName()))) {
            for (int p = 0; p < PARTITIONS; p++) {
                producer.send(new ProducerRecord<>(topic, p, null, new Click(-1 - p, end, 0, 0).toCsv())).get();
            }
        }
    }

    /** The expected lines, sorted: page views per window over all clicks, repeats included. */
    private static List<String> expected() {
        return STREAM.referencePageViewLines(CLICKS, WINDOW, false);
    }

    /** Waits until {@code topic} holds at least {@code count} committed records; returns how many. */
    private static int awaitCommitted(String topic, int count, Duration timeout) throws InterruptedException {
        return broker.awaitCommitted(topic, count, timeout,
                () -> "\n" + OpenTransactions.describe(broker, topic) + "\n" + cluster.describe(30));
    }
}
