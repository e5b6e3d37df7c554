package io.lethe.it;

import io.lethe.kafka.streams.LetheDslStoreSuppliers;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.TimeWindows;
import org.apache.kafka.streams.processor.StateRestoreListener;

import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;

/**
 * A Kafka Streams application on Lethe's stores, run by {@link KafkaStreamsOnLetheTest} in a JVM of
 * its own (so that it can be killed): for every event, the running count of its key (a key-value
 * store) and of its key in its one-second window (a window store), under {@code exactly_once_v2}
 * with the record cache off, so every update is output. It prints {@code RUNNING} when it runs and
 * {@code RESTORED <store> <partition> <records>} for every restore from the changelog.
 *
 * <p>Arguments: bootstrap servers, state directory.
 */
public final class RunningCountsApp {
    static final String APPLICATION_ID = "lethe-running-counts";
    static final String EVENTS = "events";
    static final String COUNTS = "counts";
    static final String WINDOW_COUNTS = "window-counts";

    private RunningCountsApp() {}

    static Topology topology() {
        StreamsBuilder b = new StreamsBuilder();
        KStream<String, String> events = b.stream(EVENTS, Consumed.with(Serdes.String(), Serdes.String()));
        events.groupByKey().count(Materialized.as("counts")).toStream().mapValues(String::valueOf)
                .to(COUNTS, Produced.with(Serdes.String(), Serdes.String()));
        events.groupByKey().windowedBy(TimeWindows.ofSizeWithNoGrace(Duration.ofSeconds(1)))
                .count(Materialized.as("window-counts"))
                .toStream((w, v) -> w.key() + "@" + w.window().start()).mapValues(String::valueOf)
                .to(WINDOW_COUNTS, Produced.with(Serdes.String(), Serdes.String()));
        return b.build();
    }

    public static void main(String[] args) throws InterruptedException {
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, APPLICATION_ID);
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        props.put(StreamsConfig.STATE_DIR_CONFIG, args[1]);
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        props.put(StreamsConfig.DSL_STORE_SUPPLIERS_CLASS_CONFIG, LetheDslStoreSuppliers.class);
        props.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 100);
        props.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, 1);
        props.put(StreamsConfig.consumerPrefix(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG), 6000);
        props.put(StreamsConfig.consumerPrefix(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG), 1000);
        props.put(StreamsConfig.producerPrefix("transaction.timeout.ms"), 10_000);
        props.put("lethe.write.buffer.bytes", 1 << 20);
        KafkaStreams streams = new KafkaStreams(topology(), props);
        streams.setGlobalStateRestoreListener(new Printer());
        CountDownLatch running = new CountDownLatch(1);
        streams.setStateListener((now, before) -> {
            if (now == KafkaStreams.State.RUNNING) {
                System.out.println("RUNNING");
                running.countDown();
            }
            if (now == KafkaStreams.State.ERROR) {
                System.out.println("ERROR");
            }
        });
        streams.start();
        running.await();
        Thread.sleep(Long.MAX_VALUE);  // until killed
    }

    private static final class Printer implements StateRestoreListener {
        @Override
        public void onRestoreStart(TopicPartition partition, String store, long start, long end) {}

        @Override
        public void onBatchRestored(TopicPartition partition, String store, long batchEnd, long restored) {}

        @Override
        public void onRestoreEnd(TopicPartition partition, String store, long totalRestored) {
            System.out.println("RESTORED " + store + " " + partition.partition() + " " + totalRestored);
        }
    }
}
