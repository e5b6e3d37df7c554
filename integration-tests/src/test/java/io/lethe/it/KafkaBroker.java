package io.lethe.it;

import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import kafka.tools.StorageTool;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.utils.Time;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.kafka.KafkaContainer;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.Writer;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

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
        } else {
            broker = new Embedded(dir);
        }
        broker.awaitReady();
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

    /** Every committed record of {@code topic} (read with read_committed to its end), sorted. */
    List<String> readCommitted(String topic) {
        Map<String, Object> props = Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers(),
                ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed",
                ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName(),
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        List<String> lines = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props)) {
            List<TopicPartition> partitions = consumer.partitionsFor(topic).stream()
                    .map(p -> new TopicPartition(topic, p.partition())).toList();
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            // Under read_committed the end offsets are the last stable offsets.
            Map<TopicPartition, Long> end = consumer.endOffsets(partitions);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (partitions.stream().anyMatch(tp -> consumer.position(tp) < end.get(tp))) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("Reading " + topic + " did not reach its end offsets " + end);
                }
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    lines.add(r.value());
                }
            }
        }
        Collections.sort(lines);
        return lines;
    }

    private void awaitReady() throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        Exception last = null;
        while (System.nanoTime() < deadline) {
            try (Admin admin = admin()) {
                if (!admin.describeCluster().nodes().get(5, TimeUnit.SECONDS).isEmpty()) {
                    return;
                }
            } catch (Exception e) {
                last = e;
            }
            Thread.sleep(200);
        }
        throw new IllegalStateException("The Kafka broker (" + kind() + ") did not come up within 90 s", last);
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

    /** A KRaft broker and controller in this JVM, on loopback ports, with its logs in a temporary directory. */
    private static final class Embedded extends KafkaBroker {
        private final KafkaRaftServer server;
        private final int port;

        Embedded(Path dir) throws IOException {
            port = freePort();
            int controllerPort = freePort();
            Path logs = Files.createDirectories(dir.resolve("kafka-logs"));
            Properties p = new Properties();
            p.put("process.roles", "broker,controller");
            p.put("node.id", "1");
            p.put("controller.quorum.voters", "1@127.0.0.1:" + controllerPort);
            p.put("listeners", "PLAINTEXT://127.0.0.1:" + port + ",CONTROLLER://127.0.0.1:" + controllerPort);
            p.put("advertised.listeners", "PLAINTEXT://127.0.0.1:" + port);
            p.put("controller.listener.names", "CONTROLLER");
            p.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
            p.put("inter.broker.listener.name", "PLAINTEXT");
            p.put("log.dirs", logs.toString());
            p.put("num.partitions", "1");
            p.put("offsets.topic.replication.factor", "1");
            p.put("offsets.topic.num.partitions", "1");
            p.put("transaction.state.log.replication.factor", "1");
            p.put("transaction.state.log.min.isr", "1");
            p.put("transaction.state.log.num.partitions", "4");
            p.put("share.coordinator.state.topic.replication.factor", "1");
            p.put("share.coordinator.state.topic.min.isr", "1");
            p.put("group.initial.rebalance.delay.ms", "0");
            p.put("auto.create.topics.enable", "false");
            Path file = dir.resolve("server.properties");
            try (Writer w = Files.newBufferedWriter(file)) {
                p.store(w, "embedded test broker");
            }
            // StorageTool.main would exit the JVM; execute returns the status.
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            int status = StorageTool.execute(new String[] {"format", "-t", Uuid.randomUuid().toString(), "-c",
                    file.toString(), "--ignore-formatted"}, new PrintStream(out, true, StandardCharsets.UTF_8));
            if (status != 0) {
                throw new IOException("Formatting the Kafka log directory failed: " + out.toString(StandardCharsets.UTF_8));
            }
            server = new KafkaRaftServer(KafkaConfig.fromProps(p, false), Time.SYSTEM);
            server.startup();
        }

        private static int freePort() throws IOException {
            try (ServerSocket s = new ServerSocket(0)) {
                return s.getLocalPort();
            }
        }

        @Override
        String bootstrapServers() {
            return "127.0.0.1:" + port;
        }

        @Override
        String kind() {
            return "embedded KRaft broker (Kafka 4.2 jars, no Docker)";
        }

        @Override
        public void close() {
            server.shutdown();
            server.awaitShutdown();
        }
    }
}
