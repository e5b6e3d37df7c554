package io.lethe.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A Kafka Streams application on Lethe's stores ({@link RunningCountsApp}) against a real broker,
 * under {@code exactly_once_v2}: its instance is killed (kill -9) and restarted, a second instance
 * joins and takes partitions over, then the first is killed again. Every key's running count comes
 * out exactly once, 1, 2, 3, ... without a gap or a repeat, and so does every window's, which
 * holds only if each instance restored the stores it took over from their changelogs.
 */
class KafkaStreamsOnLetheTest {
    private static final int KEYS = 12;
    private static final int PER_BATCH = 40;
    /**
     * Event time starts now, on a whole second: a broker deletes and rolls segments by record time,
     * so records from long ago could be gone before they are read.
     */
    private static final long BASE = System.currentTimeMillis() / 1000 * 1000;
    private static final Pattern RESTORED = Pattern.compile("RESTORED (\\S+) (\\d+) (\\d+)");

    @RegisterExtension
    static final KafkaBrokerExtension KAFKA = new KafkaBrokerExtension();

    @Test
    void killedInstancesRestoreAndCountExactlyOnce(@TempDir Path dir) throws Exception {
        for (String topic : List.of(RunningCountsApp.EVENTS, RunningCountsApp.COUNTS, RunningCountsApp.WINDOW_COUNTS)) {
            KAFKA.broker().createTopic(topic, 4);
        }
        List<Instance> started = new ArrayList<>();
        try (KafkaProducer<String, String> producer = producer(); Output output = new Output()) {
            Instance a = Instance.start(dir, "a", started);
            a.await("RUNNING");
            produce(producer, 0);
            output.awaitCounts(PER_BATCH, a);

            a.kill();
            produce(producer, 1);
            a = Instance.start(dir, "a", started);
            output.awaitCounts(2 * PER_BATCH, a);
            assertTrue(a.restored("counts") > 0, "the restarted instance restored nothing:\n" + a.log());

            Instance b = Instance.start(dir, "b", started);
            b.await("RUNNING");
            produce(producer, 2);
            output.awaitCounts(3 * PER_BATCH, a, b);

            a.kill();
            produce(producer, 3);
            output.awaitCounts(4 * PER_BATCH, b);
            assertTrue(b.restored("counts") > 0, "the second instance took over no state:\n" + b.log());
            b.kill();

            output.assertExactlyOnce(4 * PER_BATCH);
        } catch (AssertionError e) {
            StringBuilder logs = new StringBuilder(e.getMessage());
            for (Instance i : started) {
                logs.append("\n--- instance ").append(i.name()).append(":\n").append(i.log());
            }
            throw new AssertionError(logs.toString(), e);
        } finally {
            for (Instance i : started) {
                i.kill();
            }
        }
    }

    /** Batch i: per key, PER_BATCH events 250 ms of event time apart, in time order across keys. */
    private static void produce(KafkaProducer<String, String> producer, int batch) throws Exception {
        for (int j = 0; j < PER_BATCH; j++) {
            long ts = BASE + batch * (PER_BATCH * 250L + 10_000) + j * 250L;
            for (int k = 0; k < KEYS; k++) {
                producer.send(new ProducerRecord<>(RunningCountsApp.EVENTS, null, ts, "key" + k, "e")).get();
            }
        }
    }

    private static KafkaProducer<String, String> producer() {
        return new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, KAFKA.broker().bootstrapServers(),
                ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true,
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName(),
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName()));
    }

    /** One instance of the application in a JVM of its own, its output in a file. */
    private record Instance(Process process, Path logFile, String name) {
        static Instance start(Path dir, String name, List<Instance> started) throws IOException {
            Path state = dir.resolve(name);
            Files.createDirectories(state);
            Path log = dir.resolve(name + "-" + System.nanoTime() + ".log");
            Path logConfig = dir.resolve("log4j2.properties");
            // Warnings, and what Kafka Streams' tasks do: enough to see a stuck instance in a failure.
            Files.writeString(logConfig, String.join("\n", "rootLogger.level = warn",
                    "logger.streams.name = org.apache.kafka.streams.processor.internals", "logger.streams.level = info",
                    "rootLogger.appenderRef.out.ref = out", "appender.out.type = Console", "appender.out.name = out",
                    "appender.out.layout.type = PatternLayout",
                    "appender.out.layout.pattern = %d %-5level %c{1} - %msg%n"));
            Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-Xmx256m", "-Dlog4j2.configurationFile=" + logConfig, "-cp", System.getProperty("java.class.path"),
                    RunningCountsApp.class.getName(),
                    KAFKA.broker().bootstrapServers(), state.toString())
                    .redirectErrorStream(true).redirectOutput(log.toFile()).start();
            Instance instance = new Instance(p, log, name);
            started.add(instance);
            return instance;
        }

        void await(String line) throws Exception {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (!Files.readString(logFile).contains(line)) {
                if (System.nanoTime() > deadline || !process.isAlive()) {
                    throw new AssertionError("instance " + name + " did not print " + line + ":\n" + log());
                }
                Thread.sleep(200);
            }
        }

        /** Records restored into store's changelog partitions, summed, from the whole log. */
        long restored(String store) throws IOException {
            Matcher m = RESTORED.matcher(Files.readString(logFile));
            long n = 0;
            while (m.find()) {
                if (m.group(1).equals(store)) {
                    n += Long.parseLong(m.group(3));
                }
            }
            return n;
        }

        /** The log's last 20,000 characters, for a failure's message. */
        String log() throws IOException {
            String s = Files.readString(logFile);
            return s.length() <= 20_000 ? s : s.substring(s.length() - 20_000);
        }

        /** The stream threads' stacks, to see where a stuck instance waits. */
        String threads() {
            try {
                Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "jstack").toString(),
                        Long.toString(process.pid())).redirectErrorStream(true).start();
                String dump = new String(p.getInputStream().readAllBytes());
                p.waitFor();
                StringBuilder streams = new StringBuilder();
                for (String t : dump.split("\n\n")) {
                    if (t.contains("StreamThread") || t.contains("lethe")) {
                        streams.append(t).append("\n\n");
                    }
                }
                return streams.toString();
            } catch (IOException | InterruptedException e) {
                return "no thread dump: " + e;
            }
        }

        void kill() throws InterruptedException {
            process.destroyForcibly().waitFor();
        }
    }

    /** The committed output of both count topics, per key in the order written. */
    private static final class Output implements AutoCloseable {
        private final KafkaConsumer<String, String> consumer;
        private final Map<String, List<Long>> counts = new TreeMap<>();
        private final Map<String, List<Long>> windowCounts = new TreeMap<>();

        Output() {
            consumer = new KafkaConsumer<>(Map.of(
                    ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, KAFKA.broker().bootstrapServers(),
                    ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed",
                    ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName(),
                    ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName()));
            List<TopicPartition> partitions = new ArrayList<>();
            for (int p = 0; p < 4; p++) {
                partitions.add(new TopicPartition(RunningCountsApp.COUNTS, p));
                partitions.add(new TopicPartition(RunningCountsApp.WINDOW_COUNTS, p));
            }
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
        }

        /**
         * Reads until every key's last count is at least n and the window counts have caught up: each
         * event updates one window, in the same transaction, but a poll may return the partitions of
         * one topic before the other's.
         */
        void awaitCounts(int n, Instance... running) throws IOException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(180);
            while (counts.size() < KEYS || counts.values().stream().anyMatch(c -> c.get(c.size() - 1) < n)
                    || size(windowCounts) < size(counts)) {
                if (System.nanoTime() > deadline) {
                    StringBuilder logs = new StringBuilder();
                    for (Instance i : running) {
                        logs.append("\n--- instance ").append(i.name()).append(":\n").append(i.log());
                        logs.append("\n--- threads:\n").append(i.threads());
                    }
                    throw new AssertionError("counts did not reach " + n + ": " + lastCounts() + logs);
                }
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    Map<String, List<Long>> into = r.topic().equals(RunningCountsApp.COUNTS) ? counts : windowCounts;
                    into.computeIfAbsent(r.key(), k -> new ArrayList<>()).add(Long.parseLong(r.value()));
                }
            }
        }

        void assertExactlyOnce(int perKey) {
            for (int k = 0; k < KEYS; k++) {
                assertEquals(sequence(perKey), counts.get("key" + k), "running counts of key" + k);
            }
            // Every window holds 4 events of a key (1 s of 250 ms steps); all windows are complete.
            Map<String, List<Long>> expected = new HashMap<>();
            for (int batch = 0; batch < perKey / PER_BATCH; batch++) {
                for (int j = 0; j < PER_BATCH; j++) {
                    long ts = BASE + batch * (PER_BATCH * 250L + 10_000) + j * 250L;
                    for (int k = 0; k < KEYS; k++) {
                        String window = "key" + k + "@" + (ts - ts % 1000);
                        List<Long> w = expected.computeIfAbsent(window, x -> new ArrayList<>());
                        w.add((long) w.size() + 1);
                    }
                }
            }
            assertEquals(new TreeMap<>(expected), windowCounts, "running counts per window");
        }

        private static long size(Map<String, List<Long>> outputs) {
            return outputs.values().stream().mapToLong(List::size).sum();
        }

        private Map<String, Long> lastCounts() {
            Map<String, Long> last = new TreeMap<>();
            counts.forEach((k, c) -> last.put(k, c.get(c.size() - 1)));
            return last;
        }

        private static List<Long> sequence(int n) {
            List<Long> s = new ArrayList<>();
            for (long i = 1; i <= n; i++) {
                s.add(i);
            }
            return s;
        }

        @Override
        public void close() {
            consumer.close();
        }
    }
}
