package io.lethe.examples;

import io.lethe.kafka.streams.LetheDslStoreSuppliers;

import org.apache.flink.util.ParameterTool;
import org.apache.flink.util.TimeUtils;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.TimeWindows;
import org.apache.kafka.streams.processor.TimestampExtractor;
import org.apache.kafka.streams.state.BuiltInDslStoreSuppliers;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;

/**
 * Page views with Kafka Streams on Lethe's stores: clicks per page in tumbling event-time windows.
 * Every store of the topology is put on Lethe by configuration alone ({@code dsl.store.suppliers.class}),
 * and the window store's expired windows leave through Lethe's horizon.
 *
 * <p>Input: clicks {@code id,timestamp,user,page} keyed by page ({@code ClickProducer --key page}),
 * with the click's own timestamp as event time. Output: {@code windowEnd,page,clicks} keyed by {@code
 * page@windowEnd}, updated as the window fills; a window's last update is its count.
 *
 * <p>Without {@code --bootstrap-servers} it runs locally ({@link StreamsLocalRun}: a broker in this
 * JVM, a generated stream, the results checked). Against Kafka, until stopped: {@code
 * --bootstrap-servers HOST:PORT [--input-topic clicks] [--output-topic page-views] [--state-dir DIR]
 * [--application-id lethe-page-views] [--window 10s] [--stores lethe|rocksdb]}; any {@code lethe.*}
 * option goes to the stores.
 */
public final class PageViewStreams {
    /** The window store of the counts. */
    public static final String STORE = "page-views";
    /** Lateness accepted: the click stream's largest disorder. */
    static final Duration GRACE = ClickStream.MAX_OUT_OF_ORDERNESS;

    private PageViewStreams() {}

    public static void main(String[] args) throws Exception {
        ParameterTool params = ParameterTool.fromArgs(args);
        if (!params.has("bootstrap-servers")) {
            System.exit(StreamsLocalRun.run(params) ? 0 : 1);
        }
        Properties props = config(params.get("application-id", "lethe-page-views"),
                params.getRequired("bootstrap-servers"),
                Path.of(params.get("state-dir", System.getProperty("java.io.tmpdir") + "/lethe-page-views")),
                params.get("stores", "lethe"));
        params.toMap().forEach((k, v) -> {
            if (k.startsWith("lethe.")) {
                props.put(k, v);
            }
        });
        Topology topology = topology(params.get("input-topic", "clicks"), params.get("output-topic", "page-views"),
                TimeUtils.parseDuration(params.get("window", "10s")));
        KafkaStreams streams = new KafkaStreams(topology, props);
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            streams.close(Duration.ofSeconds(30));
            stopped.countDown();
        }));
        streams.start();
        System.out.println("Running " + topology.describe() + "Stop with Ctrl-C.");
        stopped.await();
    }

    /** Clicks per page and window: output {@code windowEnd,page,clicks} keyed by {@code page@windowEnd}. */
    public static Topology topology(String inputTopic, String outputTopic, Duration window) {
        StreamsBuilder b = new StreamsBuilder();
        b.stream(inputTopic, Consumed.with(Serdes.String(), Serdes.String()).withTimestampExtractor(new ClickTime()))
                .groupByKey()
                .windowedBy(TimeWindows.ofSizeAndGrace(window, GRACE))
                .count(Materialized.as(STORE))
                .toStream()
                .map((w, clicks) -> KeyValue.pair(w.key() + "@" + w.window().end(),
                        w.window().end() + "," + w.key() + "," + clicks))
                .to(outputTopic, Produced.with(Serdes.String(), Serdes.String()));
        return b.build();
    }

    /**
     * The application's configuration: exactly once ({@code exactly_once_v2}), its stores on Lethe
     * ({@code lethe}) or on Kafka Streams' RocksDB stores ({@code rocksdb}, for comparison).
     */
    public static Properties config(String applicationId, String bootstrapServers, Path stateDir, String stores) {
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, applicationId);
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        props.put(StreamsConfig.DSL_STORE_SUPPLIERS_CLASS_CONFIG, switch (stores.toLowerCase(Locale.ROOT)) {
            case "lethe" -> LetheDslStoreSuppliers.class;
            case "rocksdb" -> BuiltInDslStoreSuppliers.RocksDBDslStoreSuppliers.class;
            default -> throw new IllegalArgumentException("--stores is lethe or rocksdb, not " + stores);
        });
        return props;
    }

    /**
     * A click's event time from its text ({@code id,timestamp,user,page}); -1 for a record that is no
     * click, which Kafka Streams then skips with a warning.
     */
    static final class ClickTime implements TimestampExtractor {
        @Override
        public long extract(ConsumerRecord<Object, Object> record, long partitionTime) {
            try {
                return Click.parse(String.valueOf(record.value())).timestamp;
            } catch (IllegalArgumentException e) {
                return -1;
            }
        }
    }
}
