package io.lethe.examples;

import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import kafka.tools.StorageTool;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.Writer;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

/**
 * A single-node Kafka broker (broker and KRaft controller in one node) inside this JVM, from
 * Kafka's own jars, on loopback ports, with its logs under a given directory: what the local runs of
 * the Kafka Streams example and the benchmarks talk to, and the tests' broker where Docker is
 * missing. Configured for one node: every replication factor and min.isr is 1 (without {@code
 * offsets.topic.replication.factor=1} consumer groups hang silently).
 */
public final class EmbeddedKafka implements AutoCloseable {
    private final KafkaRaftServer server;
    private final int port;

    private EmbeddedKafka(Path dir) throws IOException {
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
            p.store(w, "embedded broker");
        }
        // StorageTool.main would exit the JVM; execute returns the status.
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int status = StorageTool.execute(new String[] {"format", "-t", Uuid.randomUuid().toString(), "-c",
                file.toString(), "--ignore-formatted"}, new PrintStream(out, true, StandardCharsets.UTF_8));
        if (status != 0) {
            throw new IOException("Formatting the Kafka log directory " + logs + " failed: "
                    + out.toString(StandardCharsets.UTF_8));
        }
        server = new KafkaRaftServer(KafkaConfig.fromProps(p, false), Time.SYSTEM);
        server.startup();
    }

    /** Starts a broker with its logs under {@code dir} and waits until it answers (at most 90 s). */
    public static EmbeddedKafka start(Path dir) throws IOException, InterruptedException {
        EmbeddedKafka kafka = new EmbeddedKafka(dir);
        try {
            awaitReady(kafka.bootstrapServers());
        } catch (IOException | RuntimeException e) {
            kafka.close();
            throw e;
        }
        return kafka;
    }

    public String bootstrapServers() {
        return "127.0.0.1:" + port;
    }

    /** Creates a topic with replication factor 1. */
    public void createTopic(String name, int partitions) throws IOException {
        try (Admin admin = admin()) {
            admin.createTopics(List.of(new NewTopic(name, partitions, (short) 1))).all().get(60, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IOException("Creating topic " + name + " failed", e);
        }
    }

    public Admin admin() {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers()));
    }

    /** Waits until a broker at {@code bootstrapServers} answers (at most 90 s). */
    public static void awaitReady(String bootstrapServers) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        Exception last = null;
        while (System.nanoTime() < deadline) {
            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers))) {
                if (!admin.describeCluster().nodes().get(5, TimeUnit.SECONDS).isEmpty()) {
                    return;
                }
            } catch (Exception e) {
                last = e;
            }
            Thread.sleep(200);
        }
        throw new IOException("The Kafka broker at " + bootstrapServers + " did not come up within 90 s", last);
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    @Override
    public void close() {
        server.shutdown();
        server.awaitShutdown();
    }
}
