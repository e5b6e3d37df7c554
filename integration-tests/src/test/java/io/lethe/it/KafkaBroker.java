package io.lethe.it;

import io.lethe.examples.EmbeddedKafka;
import io.lethe.examples.TopicReader;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.kafka.KafkaContainer;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * A real single-node Kafka 4.2 broker for the tests: a Testcontainers container where Docker is
 * available, otherwise a KRaft broker (broker and controller in one node) started inside this JVM
 * from Kafka's own jars. Both are configured for one node: every replication factor and min.isr is
 * 1 (without {@code offsets.topic.replication.factor=1} consumer groups hang silently).
 */
abstract class KafkaBroker implements AutoCloseable {
    /** The image of the container, the version of the embedded broker's jars. */
    static final String IMAGE = "apache/kafka:4.2.0";

    abstract String bootstrapServers();

    /** What runs the broker, for the test log. */
    abstract String kind();

    /**
     * Starts a broker: {@code -Dlethe.it.kafka=container} or {@code embedded} forces the kind;
     * otherwise ({@code auto}) a container where Docker answers, else the embedded broker.
     */
    static KafkaBroker start(Path dir) throws Exception {
        String choice = System.getProperty("lethe.it.kafka", "auto");
        boolean container = switch (choice) {
            case "container" -> true;
            case "embedded" -> false;
            case "auto" -> DockerClientFactory.instance().isDockerAvailable();
            default -> throw new IllegalArgumentException("lethe.it.kafka is auto, container or embedded, not " + choice);
        };
        KafkaBroker broker;
        if (container) {
            broker = new Container();
            EmbeddedKafka.awaitReady(broker.bootstrapServers());
        } else {
            broker = new Embedded(dir);  // ready when started
        }
        System.out.println("Kafka broker: " + broker.kind() + " at " + broker.bootstrapServers());
        return broker;
    }

    Admin admin() {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers()));
    }

    void createTopic(String name, int partitions) throws Exception {
        try (Admin admin = admin()) {
            admin.createTopics(List.of(new NewTopic(name, partitions, (short) 1))).all().get(60, TimeUnit.SECONDS);
        }
    }

    /** Topics {@code <name>-in} and {@code <name>-out}, a test's input and output. */
    void createInputAndOutput(String name, int partitions) throws Exception {
        createTopic(name + "-in", partitions);
        createTopic(name + "-out", partitions);
    }

    /**
     * Waits until {@code topic} holds at least {@code count} committed records; returns how many.
     * On timeout fails with the count and {@code diagnosis}'s text.
     */
    int awaitCommitted(String topic, int count, Duration timeout, Supplier<String> diagnosis)
            throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        int n = 0;
        while (System.nanoTime() < deadline) {
            n = readCommitted(topic).size();
            if (n >= count) {
                return n;
            }
            Thread.sleep(300);
        }
        throw new AssertionError(topic + " holds " + n + " committed records, not " + count + ", after " + timeout
                + diagnosis.get());
    }

    /** Every committed record of {@code topic} (read with read_committed to its end), sorted. */
    List<String> readCommitted(String topic) {
        List<String> lines = new ArrayList<>();
        TopicReader.readCommitted(bootstrapServers(), topic, Duration.ofSeconds(60), r -> lines.add(r.value()));
        Collections.sort(lines);
        return lines;
    }

    /**
     * {@link #readCommitted} once every transaction on {@code topic} is decided, for a topic whose
     * writers stopped (a finished or stopped job): its last commit markers may still be on their way.
     */
    List<String> readDecided(String topic) {
        TopicReader.awaitDecided(bootstrapServers(), topic, Duration.ofSeconds(60));
        return readCommitted(topic);
    }

    /**
     * The sum of {@code topic}'s end offsets: every record written to it, committed, aborted or in an
     * open transaction, and the transactions' commit and abort markers.
     */
    long offsets(String topic) throws Exception {
        try (Admin admin = admin()) {
            List<TopicPartition> partitions = TopicReader.partitions(admin, topic);
            return TopicReader.endOffsets(admin, partitions, IsolationLevel.READ_UNCOMMITTED).values().stream()
                    .mapToLong(Long::longValue).sum();
        }
    }

    /** Kafka's own image, in Docker. */
    private static final class Container extends KafkaBroker {
        private final KafkaContainer container;

        Container() {
            container = new KafkaContainer(IMAGE)
                    .withEnv("KAFKA_TRANSACTION_STATE_LOG_NUM_PARTITIONS", "4")
                    .withEnv("KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS", "0");
            container.start();
        }

        @Override
        String bootstrapServers() {
            return container.getBootstrapServers();
        }

        @Override
        String kind() {
            return "Testcontainers " + IMAGE;
        }

        @Override
        public void close() {
            container.stop();
        }
    }

    /** A KRaft broker and controller in this JVM ({@link EmbeddedKafka}). */
    private static final class Embedded extends KafkaBroker {
        private final EmbeddedKafka kafka;

        Embedded(Path dir) throws Exception {
            kafka = EmbeddedKafka.start(dir);
        }

        @Override
        String bootstrapServers() {
            return kafka.bootstrapServers();
        }

        @Override
        String kind() {
            return "embedded KRaft broker (Kafka 4.2 jars, no Docker)";
        }

        @Override
        public void close() {
            kafka.close();
        }
    }
}
