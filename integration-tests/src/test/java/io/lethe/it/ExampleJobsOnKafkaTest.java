package io.lethe.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.lethe.examples.ClickProducer;
import io.lethe.examples.ClickStream;
import io.lethe.examples.ClickWindows;
import io.lethe.examples.TtlDedup;

import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.GlobalConfiguration;
import org.apache.flink.runtime.client.JobStatusMessage;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.test.junit5.InjectMiniCluster;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The example jobs as a user submits them to a cluster: their {@code main} with Kafka arguments,
 * on a MiniCluster configured from {@code examples/conf/config.yaml} (only the directories and the
 * checkpoint interval changed). The results in the output topics equal the plain computation, and
 * the jobs ran on Lethe.
 */
class ExampleJobsOnKafkaTest {
    private static final ClickStream STREAM = new ClickStream(10_000, 1_000, 100, 10, ClickStream.DEFAULT_START_MILLIS);
    private static final long CLICKS = 100_000;

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER = new MiniClusterExtension(new MiniClusterResourceConfiguration.Builder()
            .setConfiguration(clusterConfiguration()).setNumberTaskManagers(1).setNumberSlotsPerTaskManager(2).build());

    @TempDir
    static Path brokerDir;
    private static KafkaBroker broker;

    /** The example's config.yaml with this test's directories and a short checkpoint interval. */
    private static Configuration clusterConfiguration() {
        try {
            Path dir = Files.createTempDirectory("lethe-example-cluster-");
            Configuration conf = GlobalConfiguration.loadConfiguration(Path.of("..", "examples", "conf").toString());
            conf.setString("state.backend.lethe.localdir", dir.resolve("local").toString());
            conf.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, dir.resolve("checkpoints").toUri().toString());
            conf.set(CheckpointingOptions.SAVEPOINT_DIRECTORY, dir.resolve("savepoints").toUri().toString());
            conf.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, Duration.ofMillis(300));
            return conf;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @BeforeAll
    static void startBrokerAndFillTopic() throws Exception {
        broker = KafkaBroker.start(brokerDir);
        broker.createTopic("clicks", 2);
        broker.createTopic("page-views", 2);
        broker.createTopic("unique-clicks", 2);
        ClickProducer.produce(broker.bootstrapServers(), "clicks", STREAM, 0, CLICKS, 0);
    }

    @AfterAll
    static void stopBroker() throws Exception {
        if (broker != null) {
            broker.close();
        }
    }

    @Test
    void clickWindows(@InjectMiniCluster MiniCluster cluster) throws Exception {
        ClickWindows.main(new String[] {"--bootstrap-servers", broker.bootstrapServers(), "--input-topic", "clicks",
                "--output-topic", "page-views", "--bounded", "--window", "5 s"});
        List<String> expected = STREAM.referencePageViewLines(CLICKS, Duration.ofSeconds(5), false);
        OutputLines.assertSame(expected, broker.readDecided("page-views"), "");
        assertEquals("LetheStateBackend", stateBackendOf(cluster, "Lethe example: click-windows"));
    }

    @Test
    void ttlDedup(@InjectMiniCluster MiniCluster cluster) throws Exception {
        TtlDedup.main(new String[] {"--bootstrap-servers", broker.bootstrapServers(), "--input-topic", "clicks",
                "--output-topic", "unique-clicks", "--bounded", "--ttl", "1 h"});
        List<String> expected = new ArrayList<>();
        for (long i = 0; i < CLICKS; i++) {
            if (!STREAM.isDuplicate(i)) {
                expected.add(STREAM.click(i).toCsv());
            }
        }
        Collections.sort(expected);
        OutputLines.assertSame(expected, broker.readDecided("unique-clicks"), "");
        assertEquals("LetheStateBackend", stateBackendOf(cluster, "Lethe example: ttl-dedup"));
    }

    private static String stateBackendOf(MiniCluster cluster, String jobName) throws Exception {
        for (JobStatusMessage job : cluster.listJobs().get()) {
            if (job.getJobName().equals(jobName)) {
                return cluster.getArchivedExecutionGraph(job.getJobId()).get().getStateBackendName().orElse("none");
            }
        }
        throw new AssertionError("no job named " + jobName);
    }
}
