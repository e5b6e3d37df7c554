package io.lethe.examples;

import io.lethe.kafka.streams.LetheStoreConfig;

import org.apache.flink.util.ParameterTool;
import org.apache.flink.util.TimeUtils;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Runs {@link PageViewStreams} locally: a Kafka broker in this JVM ({@link EmbeddedKafka}), the
 * generated click stream written to it keyed by page while the application runs on Lethe's stores
 * (or Kafka Streams' RocksDB stores, {@code --stores rocksdb}), progress while it runs, then a
 * report: each window's last output against a plain computation of the same clicks, the state
 * directory's size, and the Lethe stores' files and horizon.
 *
 * <p>Options: {@code --clicks} (2,000,000), {@code --rate} clicks per second (0 = as fast as
 * possible), {@code --window 10s}, {@code --pages 1000}, {@code --users 100000}, {@code
 * --clicks-per-event-second 10000}, {@code --partitions 4}, {@code --threads 2}, {@code --stores
 * lethe|rocksdb}, {@code --delete-persistence-threshold 10s}, {@code --work-dir DIR} (kept;
 * otherwise a temporary directory is removed).
 */
final class StreamsLocalRun {
    private static final String APPLICATION_ID = "lethe-page-views";
    private static final String INPUT = "clicks";
    private static final String OUTPUT = "page-views";
    private static final long PROGRESS_EVERY_MS = 2_000;
    /** The run fails when no click is processed for this long. */
    private static final long STALL_MS = 120_000;

    private StreamsLocalRun() {}

    /** Returns whether every window's count equals the plain computation. */
    static boolean run(ParameterTool params) throws Exception {
        long n = params.getLong("clicks", 2_000_000);
        int partitions = params.getInt("partitions", 4);
        Duration window = TimeUtils.parseDuration(params.get("window", "10s"));
        Duration dth = TimeUtils.parseDuration(params.get("delete-persistence-threshold", "10s"));
        String stores = params.get("stores", "lethe");
        ClickStream stream = new ClickStream(params.getLong("clicks-per-event-second", 10_000),
                params.getLong("users", 100_000), params.getInt("pages", 1_000), 0, ClickProducer.startMillis("now"));
        Path work = params.has("work-dir") ? Files.createDirectories(Path.of(params.get("work-dir")))
                : Files.createTempDirectory("lethe-page-views");
        System.out.printf(Locale.ROOT, "Page views with Kafka Streams on %s stores: %,d clicks, %,d pages, tumbling %s"
                        + " event-time windows, %d partitions, exactly once%s%n", stores, n, stream.pages(),
                TimeUtils.formatWithHighestUnit(window), partitions,
                stores.equals("lethe") ? ", D_th " + TimeUtils.formatWithHighestUnit(dth) : "");
        try (EmbeddedKafka kafka = EmbeddedKafka.start(work.resolve("kafka"))) {
            kafka.createTopic(INPUT, partitions);
            kafka.createTopic(OUTPUT, partitions);
            Properties props = PageViewStreams.config(APPLICATION_ID, kafka.bootstrapServers(), work.resolve("state"),
                    stores);
            props.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, 1);
            props.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, params.getInt("threads", 2));
            if (stores.equals("lethe")) {
                props.put(LetheStoreConfig.DELETE_PERSISTENCE_THRESHOLD_MS, dth.toMillis());
            }
            Map<String, Object> seen = process(kafka, props, stream, n, window, params.getLong("rate", 0));
            return report(stream, n, window, latest(kafka.bootstrapServers()), seen);
        } finally {
            if (!params.has("work-dir")) {
                Directories.deleteTree(work);
            }
        }
    }

    /**
     * Writes the clicks while the application runs, until it has committed all of them; returns
     * what the report shows of the run (seconds, state directory, Lethe gauges).
     */
    private static Map<String, Object> process(EmbeddedKafka kafka, Properties props, ClickStream stream, long n,
            Duration window, long rate) throws Exception {
        CompletableFuture<Void> produced = CompletableFuture.runAsync(() -> {
            try {
                ClickProducer.produce(kafka.bootstrapServers(), INPUT, stream, 0, n, rate, ClickProducer.Key.PAGE);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        Path stateDir = Path.of(props.getProperty(StreamsConfig.STATE_DIR_CONFIG));
        Map<String, Object> seen = new HashMap<>();
        long start = System.nanoTime();
        try (KafkaStreams streams = new KafkaStreams(PageViewStreams.topology(INPUT, OUTPUT, window), props);
                Admin admin = kafka.admin()) {
            streams.start();
            awaitCommitted(streams, admin, n, stateDir, start);
            seen.put("seconds", (System.nanoTime() - start) / 1e9);
            seen.put("state bytes", Directories.size(stateDir));
            seen.put("state files", Directories.files(stateDir));
            seen.putAll(letheGauges(streams));
        }
        produced.get();
        return seen;
    }

    private static void awaitCommitted(KafkaStreams streams, Admin admin, long n, Path stateDir, long start)
            throws Exception {
        long committed = 0;
        long lastChange = System.nanoTime();
        while (committed < n) {
            Thread.sleep(PROGRESS_EVERY_MS);
            if (streams.state() == KafkaStreams.State.ERROR || streams.state() == KafkaStreams.State.NOT_RUNNING) {
                throw new IllegalStateException("The Kafka Streams application stopped: " + streams.state());
            }
            long now = committed(admin);
            if (now != committed) {
                lastChange = System.nanoTime();
            } else if (System.nanoTime() - lastChange > TimeUnit.MILLISECONDS.toNanos(STALL_MS)) {
                throw new IllegalStateException("No click processed for " + STALL_MS / 1000 + " s, at " + now);
            }
            committed = now;
            double s = (System.nanoTime() - start) / 1e9;
            System.out.printf(Locale.ROOT, "  %5.0f s  clicks processed %,d / %,d (%,.0f/s), state %s in %d files%n", s,
                    committed, n, committed / s, LocalRun.mib(Directories.size(stateDir)), Directories.files(stateDir));
        }
    }

    /** Input offsets the application committed, summed over partitions. */
    private static long committed(Admin admin) throws Exception {
        Map<TopicPartition, OffsetAndMetadata> offsets = admin.listConsumerGroupOffsets(APPLICATION_ID)
                .partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
        return offsets.entrySet().stream().filter(e -> e.getKey().topic().equals(INPUT) && e.getValue() != null)
                .mapToLong(e -> e.getValue().offset()).sum();
    }

    /** The Lethe stores' files, bytes and horizon, summed (the horizon: the lowest). */
    private static Map<String, Object> letheGauges(KafkaStreams streams) {
        Map<String, Object> gauges = new TreeMap<>();
        for (Map.Entry<MetricName, ? extends Metric> e : streams.metrics().entrySet()) {
            MetricName name = e.getKey();
            if (!name.tags().containsKey("lethe-state-id") || !(e.getValue().metricValue() instanceof Number v)) {
                continue;
            }
            switch (name.name()) {
                case "files", "total-bytes" -> gauges.merge("lethe " + name.name(), v.longValue(),
                        (a, b) -> (Long) a + (Long) b);
                case "horizon" -> gauges.merge("lethe horizon", v.longValue(), (a, b) -> Math.min((Long) a, (Long) b));
                default -> { }
            }
        }
        return gauges;
    }

    /** The last committed value of every key of the output topic. */
    private static Map<String, String> latest(String bootstrapServers) {
        Map<String, String> last = new HashMap<>();
        TopicReader.readDecided(bootstrapServers, OUTPUT, Duration.ofMinutes(2), r -> last.put(r.key(), r.value()));
        return last;
    }

    private static boolean report(ClickStream stream, long n, Duration window, Map<String, String> output,
            Map<String, Object> seen) {
        Map<String, String> expected = new HashMap<>();
        stream.referencePageViews(n, window, false, v -> expected.put(v.page + "@" + v.windowEnd,
                v.windowEnd + "," + v.page + "," + v.clicks));
        long differing = expected.entrySet().stream().filter(e -> !e.getValue().equals(output.get(e.getKey())))
                .count() + output.keySet().stream().filter(k -> !expected.containsKey(k)).count();
        double seconds = (Double) seen.get("seconds");
        System.out.println();
        System.out.println("Report");
        LocalRun.row("clicks processed", String.format(Locale.ROOT, "%,d in %.1f s (%,.0f/s, with the broker in this"
                + " JVM)", n, seconds, n / seconds));
        LocalRun.row("results", differing == 0
                ? String.format(Locale.ROOT, "%,d page views (page x window), each window's last update equal to a"
                        + " plain Java computation of the same clicks", expected.size())
                : String.format(Locale.ROOT, "DIFFER from a plain Java computation: %,d of %,d page views",
                        differing, expected.size()));
        LocalRun.row("state directory", String.format(Locale.ROOT, "%s in %d files at the end",
                LocalRun.mib((Long) seen.get("state bytes")), (Long) seen.get("state files")));
        if (seen.containsKey("lethe files")) {
            long horizon = (Long) seen.get("lethe horizon");
            LocalRun.row("Lethe stores", String.format(Locale.ROOT, "%d table files, %s; horizon %s: windows"
                            + " starting before it are gone from reads and leave the files by page drops and FADE",
                    (Long) seen.get("lethe files"), LocalRun.mib((Long) seen.get("lethe total-bytes")),
                    Instant.ofEpochMilli(horizon)));
        }
        return differing == 0;
    }
}
