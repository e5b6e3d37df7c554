package io.lethe.bench.streams;

import io.lethe.bench.jobs.ExperimentSettings;
import io.lethe.examples.Click;
import io.lethe.examples.ClickStream;
import io.lethe.examples.Directories;
import io.lethe.examples.EmbeddedKafka;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.AppInfoParser;
import org.rocksdb.RocksDB;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The Kafka Streams benchmark: a windowed aggregation ({@link StreamsWorkload}) on Lethe's stores and
 * on Kafka Streams' RocksDB stores as shipped and tuned, with LZ4 or ZSTD ({@link StreamsSystem}), each run an
 * application in a JVM of its own ({@link StreamsRun}, 1 GiB heap pre-touched, so what it holds
 * beyond is its stores'), against one Kafka broker in this JVM. Every run reads the same main topic,
 * written once, as fast as it goes (records/s, disk blocks of the state directory, open files,
 * memory), then a drain topic that this driver fills with a few clicks per second in real time, so
 * that stream time moves as in a live application and windows expire: how long bytes of an expired
 * window stay on disk. The systems run in turn, the order rotated each round.
 *
 * <pre>StreamsBench quick|full OUT_DIR</pre>
 *
 * System properties for a look at one part (not for the report): {@code lethe.bench.streams.systems}
 * (comma-separated ids, default all), {@code lethe.bench.streams.rounds} and {@code
 * lethe.bench.streams.child-jvm-options} (space-separated options added to each application's JVM,
 * e.g. a flight recording), and {@code lethe.bench.conf.<system>} (its Kafka Streams properties
 * changed for an experiment, {@link ExperimentSettings}).
 *
 * Writes {@code streams.csv} (one row per run), {@code streams-timeline.csv} (a row per second and
 * run) and {@code streams.settings.csv}.
 */
public final class StreamsBench {
    private static final int DRAIN_EVERY_MS = 100;

    private final StreamsWorkload w;
    private final String mode;
    private final Path out;
    private final Path work;
    private final EmbeddedKafka kafka;
    private long drainStartMillis;

    private StreamsBench(StreamsWorkload w, String mode, Path out, Path work, EmbeddedKafka kafka) {
        this.w = w;
        this.mode = mode;
        this.out = out;
        this.work = work;
        this.kafka = kafka;
    }

    public static void main(String[] args) throws Exception {
        StreamsWorkload w = StreamsWorkload.of(args[0]);
        Path out = Files.createDirectories(Path.of(args[1]));
        Path work = Files.createTempDirectory("lethe-streams-bench");
        try (EmbeddedKafka kafka = EmbeddedKafka.start(work.resolve("kafka"))) {
            new StreamsBench(w, args[0], out, work, kafka).run();
        } finally {
            Directories.deleteTree(work);
        }
        System.exit(0);
    }

    private void run() throws Exception {
        kafka.createTopic(StreamsWorkload.MAIN_TOPIC, w.partitions());
        long startMillis = System.currentTimeMillis() / 1000 * 1000;
        produceMain(w.stream(startMillis));
        // Past every main click (each within half a second of the stream's clock).
        drainStartMillis = startMillis + w.clicks() * 1000 / w.clicksPerEventSecond() + 1000;
        writeSettings();
        try (PrintWriter results = csv("streams.csv", StreamsRun.RESULT_COLUMNS + ",output_keys_checked,"
                + "output_fingerprint");
                PrintWriter timeline = csv("streams-timeline.csv", StreamsRun.SAMPLE_COLUMNS)) {
            StreamsSystem[] systems = systems();
            int rounds = Integer.getInteger("lethe.bench.streams.rounds", w.rounds());
            for (int round = 1; round <= rounds; round++) {
                for (int i = 0; i < systems.length; i++) {
                    StreamsSystem system = systems[(i + round - 1) % systems.length];
                    System.out.printf("round %d/%d: %s%n", round, rounds, system.id);
                    runOne(system, round, results, timeline);
                }
            }
        }
        System.out.println("wrote " + out.resolve("streams.csv") + " and " + out.resolve("streams-timeline.csv"));
    }

    private static StreamsSystem[] systems() {
        String ids = System.getProperty("lethe.bench.streams.systems");
        return ids == null ? StreamsSystem.values()
                : Arrays.stream(ids.split(",")).map(String::strip).map(StreamsSystem::of).toArray(StreamsSystem[]::new);
    }

    private void produceMain(ClickStream stream) throws InterruptedException {
        long start = System.nanoTime();
        try (KafkaProducer<String, String> producer = producer()) {
            for (long i = 0; i < w.clicks(); i++) {
                Click c = stream.click(i);
                producer.send(new ProducerRecord<>(StreamsWorkload.MAIN_TOPIC, StreamsWorkload.key(c), c.toCsv()));
                if ((i + 1) % 1_000_000 == 0) {
                    System.out.printf(Locale.ROOT, "input: %,d of %,d clicks written%n", i + 1, w.clicks());
                }
            }
        }
        System.out.printf(Locale.ROOT, "input: %,d clicks written in %.0f s%n", w.clicks(),
                (System.nanoTime() - start) / 1e9);
    }

    private KafkaProducer<String, String> producer() {
        return new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ProducerConfig.ACKS_CONFIG, "all", ProducerConfig.LINGER_MS_CONFIG, 20,
                ProducerConfig.BATCH_SIZE_CONFIG, 256 << 10, ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG,
                StringSerializer.class, ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class));
    }

    /** One application run in a child JVM: main topic, then the drain; its lines go to the CSV files. */
    private void runOne(StreamsSystem system, int round, PrintWriter results, PrintWriter timeline)
            throws Exception {
        String drainTopic = "drain-" + system.id + "-" + round;
        String outputTopic = "out-" + system.id + "-" + round;
        kafka.createTopic(drainTopic, w.partitions());
        kafka.createTopic(outputTopic, w.partitions());
        Path stateDir = work.resolve("state-" + system.id + "-" + round);
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xms1g", "-Xmx1g", "-XX:+AlwaysPreTouch"));
        String childOptions = System.getProperty("lethe.bench.streams.child-jvm-options", "").strip();
        if (!childOptions.isEmpty()) {
            cmd.addAll(List.of(childOptions.split("\\s+")));
        }
        String experiment = System.getProperty(ExperimentSettings.PROPERTY + system.id);
        if (experiment != null) {
            cmd.add("-D" + ExperimentSettings.PROPERTY + system.id + "=" + experiment);
        }
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), StreamsRun.class.getName(), mode, system.id,
                Integer.toString(round), kafka.bootstrapServers(), stateDir.toString(), drainTopic, outputTopic));
        Process child = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        CompletableFuture<Void> drain = null;
        String result = null;
        int samples = 0;
        try (BufferedReader in = new BufferedReader(new InputStreamReader(child.getInputStream(),
                StandardCharsets.UTF_8)); Writer control = child.outputWriter(StandardCharsets.UTF_8)) {
            for (String line; (line = in.readLine()) != null; ) {
                if (line.startsWith("SAMPLE ")) {
                    timeline.println(line.substring(7));
                    if (++samples % 10 == 0) {
                        System.out.println("  " + progress(line.substring(7)));
                    }
                } else if (line.startsWith("RESULT ")) {
                    result = line.substring(7);
                    System.out.println("  result: " + result);
                } else if (line.equals("MAIN-DONE")) {
                    drain = CompletableFuture.runAsync(() -> drain(drainTopic, control));
                } else {
                    System.out.println("  " + line);
                }
            }
        }
        timeline.flush();
        if (!child.waitFor(10, TimeUnit.MINUTES) || child.exitValue() != 0 || drain == null) {
            child.destroyForcibly();
            throw new IllegalStateException(system.id + " round " + round + " failed (exit code "
                    + (child.isAlive() ? "none" : child.exitValue()) + ")");
        }
        drain.get();
        OutputCheck check = OutputCheck.of(kafka.bootstrapServers(), outputTopic);
        System.out.printf(Locale.ROOT, "  output: %,d windows checked, fingerprint %016x%n", check.keys(),
                check.fingerprint());
        results.printf(Locale.ROOT, "%s,%d,%016x%n", result, check.keys(), check.fingerprint());
        results.flush();
        deleteTopics(List.of(drainTopic, outputTopic), "bench-" + system.id + "-" + round + "-");
        Directories.deleteTree(stateDir);
    }

    /**
     * Clicks into every partition of the drain topic in real time, event time running on from the
     * main topic's end at the wall clock's pace; tells the run the phase, and to stop at the end.
     */
    private void drain(String topic, Writer control) {
        try (KafkaProducer<String, String> producer = producer()) {
            control.write("drain\n");
            control.flush();
            long start = System.currentTimeMillis();
            long id = w.clicks();
            while (System.currentTimeMillis() - start < w.drainSeconds() * 1000L) {
                long t = drainStartMillis + System.currentTimeMillis() - start;
                for (int p = 0; p < w.partitions(); p++) {
                    Click c = new Click(id++, t, p, 0);
                    producer.send(new ProducerRecord<>(topic, p, "drain-" + p, c.toCsv()));
                }
                Thread.sleep(DRAIN_EVERY_MS);
            }
            producer.flush();
            Thread.sleep(2_000);  // the last clicks processed and sampled
            control.write("STOP\n");
            control.flush();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static String progress(String sample) {
        String[] f = sample.split(",");
        return String.format(Locale.ROOT, "%s %5.0f s: %,d clicks, disk %.0f MiB, %s open files, expired windows on"
                + " disk for %s s", f[2], Double.parseDouble(f[3]), Long.parseLong(f[4]),
                Long.parseLong(f[9]) / 1048576.0, f[10], f[8]);
    }

    private void deleteTopics(List<String> runTopics, String internalPrefix) throws Exception {
        try (Admin admin = kafka.admin()) {
            List<String> topics = new ArrayList<>(admin.listTopics().names().get(60, TimeUnit.SECONDS).stream()
                    .filter(t -> t.startsWith(internalPrefix)).toList());
            topics.addAll(runTopics);
            admin.deleteTopics(topics).all().get(60, TimeUnit.SECONDS);
        }
    }

    private void writeSettings() throws IOException {
        try (PrintWriter csv = csv("streams.settings.csv", "key,value")) {
            csv.println("what,a Kafka Streams application (at_least_once as Kafka Streams defaults: commits every 30 s;"
                    + " 10 MiB record cache; changelogs on) in a JVM of its own with a 1 GiB heap; a single-node Kafka"
                    + " broker in the benchmark's JVM; all on this machine");
            RocksDB.loadLibrary();
            csv.println("versions,Kafka and Kafka Streams " + AppInfoParser.getVersion() + "; RocksDB "
                    + RocksDB.rocksdbVersion() + " (rocksdbjni, as Kafka Streams ships it)");
            w.settings().forEach((k, v) -> csv.println(k + "," + v));
            for (StreamsSystem s : StreamsSystem.values()) {
                csv.println(s.id + "," + s.settings(w));
            }
        }
    }

    private PrintWriter csv(String name, String header) throws IOException {
        PrintWriter w = new PrintWriter(Files.newBufferedWriter(out.resolve(name)));
        w.println(header);
        return w;
    }
}
