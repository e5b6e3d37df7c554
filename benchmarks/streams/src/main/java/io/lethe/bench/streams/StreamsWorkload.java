package io.lethe.bench.streams;

import io.lethe.bench.jobs.ProcessCpu;
import io.lethe.examples.Click;
import io.lethe.examples.ClickStream;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.TimeWindows;
import org.apache.kafka.streams.processor.TimestampExtractor;
import org.apache.kafka.streams.state.WindowStore;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;

/**
 * The benchmark's work: clicks per user in tumbling event-time windows, kept for a retention period
 * (as an application that answers interactive queries over the last {@code retention} does), with
 * the counts written to an output topic. Input records are clicks {@code id,timestamp,user,page}
 * keyed by user, from {@link ClickStream} (click i a pure function of i, event time in order within
 * a second). The input is the main topic, then a drain topic that a run fills slowly at the end.
 *
 * @param clicks clicks in the main topic
 * @param users distinct keys
 * @param clicksPerEventSecond how fast event time advances per click
 * @param window the tumbling window
 * @param retention how long a window stays in the store
 * @param partitions input partitions, so tasks
 * @param threads stream threads of an application
 * @param drainSeconds how long the slow drain runs, in real time
 * @param rounds runs of each system, interleaved
 * @param memoryBytes the state stores' memory of one application (caches and write buffers)
 * @param deletePersistenceThreshold Lethe's D_th
 */
record StreamsWorkload(long clicks, long users, long clicksPerEventSecond, Duration window, Duration retention,
        int partitions, int threads, int drainSeconds, int rounds, long memoryBytes,
        Duration deletePersistenceThreshold) {
    static final String STORE = "user-clicks";
    static final String MAIN_TOPIC = "clicks";
    /** Event time starts at the current second when the input is written (the broker keeps it). */
    static final Duration GRACE = ClickStream.MAX_OUT_OF_ORDERNESS;

    static StreamsWorkload of(String mode) {
        return switch (mode) {
            case "quick" -> new StreamsWorkload(300_000, 50_000, 5_000, Duration.ofSeconds(10), Duration.ofSeconds(30),
                    4, 2, 8, 1, 64L << 20, Duration.ofSeconds(10));
            case "full" -> new StreamsWorkload(12_000_000, 500_000, 5_000, Duration.ofMinutes(1),
                    Duration.ofMinutes(20), 4, 2, 150, 2, 128L << 20, Duration.ofMinutes(2));
            default -> throw new IllegalArgumentException("mode is quick or full, not " + mode);
        };
    }

    ClickStream stream(long startMillis) {
        return new ClickStream(clicksPerEventSecond, users, 1_000, 0, startMillis);
    }

    /** The key of a click's record: its user. */
    static String key(Click c) {
        return Long.toString(c.user);
    }

    /**
     * Reads {@code inputs}, counts clicks per user and window into the window store {@link #STORE},
     * writes each update to {@code output} as {@code user@windowStart -> count}, and reports every
     * click's event time to {@code seen} (the run's progress and stream time).
     */
    Topology topology(List<String> inputs, String output, LongConsumer seen) {
        StreamsBuilder b = new StreamsBuilder();
        b.stream(inputs, Consumed.with(Serdes.String(), Serdes.String()).withTimestampExtractor(new ClickTime()))
                .peek((user, line) -> seen.accept(Click.parse(line).timestamp))
                .groupByKey()
                .windowedBy(TimeWindows.ofSizeAndGrace(window, GRACE))
                .count(Materialized.<String, Long, WindowStore<Bytes, byte[]>>as(STORE).withRetention(retention))
                .toStream()
                .map((w, n) -> KeyValue.pair(w.key() + "@" + w.window().start(), Long.toString(n)))
                .to(output, Produced.with(Serdes.String(), Serdes.String()));
        return b.build();
    }

    /** Kafka Streams' segment interval for this retention: what a RocksDB window store drops at once. */
    Duration rocksDbSegmentInterval() {
        return Duration.ofMillis(Math.max(retention.toMillis() / 2, 60_000L));
    }

    /** The settings as name-value pairs, for the report. */
    Map<String, String> settings() {
        Map<String, String> s = new LinkedHashMap<>();
        s.put("clicks in the main topic", Long.toString(clicks));
        s.put("users (keys)", Long.toString(users));
        s.put("clicks per event-time second", Long.toString(clicksPerEventSecond));
        s.put("tumbling window", seconds(window));
        s.put("grace", seconds(GRACE));
        s.put("retention of the window store", seconds(retention));
        s.put("RocksDB segment interval (Kafka Streams: half the retention, at least a minute)",
                seconds(rocksDbSegmentInterval()));
        s.put("partitions (tasks)", Integer.toString(partitions));
        s.put("stream threads", Integer.toString(threads));
        s.put("drain in real time", drainSeconds + " s");
        s.put("rounds", Integer.toString(rounds));
        s.put("store memory per application (Lethe and tuned RocksDB)", (memoryBytes >> 20) + " MiB");
        return s;
    }

    private static String seconds(Duration d) {
        return d.toSeconds() + " s";
    }

    /** A click's event time from its text. */
    static final class ClickTime implements TimestampExtractor {
        @Override
        public long extract(ConsumerRecord<Object, Object> record, long partitionTime) {
            return Click.parse((String) record.value()).timestamp;
        }
    }

    /** The largest event time seen and the number of clicks, shared with the run's sampler. */
    static final class Progress implements LongConsumer {
        final AtomicLong clicks = new AtomicLong();
        final AtomicLong streamTime = new AtomicLong(Long.MIN_VALUE);
        final AtomicLong firstNanos = new AtomicLong();
        final AtomicLong firstCpuNanos = new AtomicLong();  // the process's CPU time at the first click

        @Override
        public void accept(long timestamp) {
            if (clicks.incrementAndGet() == 1) {
                firstNanos.set(System.nanoTime());
                firstCpuNanos.set(ProcessCpu.nanos());
            }
            streamTime.accumulateAndGet(timestamp, Math::max);
        }
    }
}
