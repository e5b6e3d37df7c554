package io.lethe.examples;

import org.apache.flink.util.ParameterTool;

import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.serialization.StringSerializer;

import java.util.Locale;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Writes the generated click stream ({@link ClickStream}) to a Kafka topic as text lines {@code
 * id,timestamp,user,page}, keyed by id (a repeat lands in its original's partition, after it) or by
 * page, so the examples can run on a cluster against a real topic.
 *
 * <p>{@code --bootstrap-servers HOST:PORT [--topic clicks] [--clicks 1000000] [--from 0]
 * [--duplicate-percent 10] [--rate 0 (as fast as possible)] [--key id|page] [--start now|MILLIS]}:
 * event time starts at 2026-01-01 unless {@code --start} says otherwise. A broker deletes records
 * older than its retention (7 days by default) from the topics Kafka Streams writes, so the Kafka
 * Streams example wants {@code --start now}.
 */
public final class ClickProducer {
    private ClickProducer() {}

    /** Sends clicks {@code [from, to)} keyed by id and waits until the broker acknowledged all of them. */
    public static void produce(String bootstrapServers, String topic, ClickStream stream, long from, long to,
            long ratePerSecond) throws InterruptedException {
        produce(bootstrapServers, topic, stream, from, to, ratePerSecond, Key.ID);
    }

    /** What a click's record is keyed by: its id, or its page (for a Kafka Streams aggregation by page). */
    public enum Key {
        ID, PAGE;

        String of(Click c) {
            return this == ID ? Long.toString(c.id) : Integer.toString(c.page);
        }
    }

    /**
     * Sends clicks {@code [from, to)} and waits until the broker acknowledged all of them; a send
     * that failed after the producer's retries fails the call (its records are not on the topic).
     */
    public static void produce(String bootstrapServers, String topic, ClickStream stream, long from, long to,
            long ratePerSecond, Key key) throws InterruptedException {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        long start = System.nanoTime();
        AtomicReference<Exception> failure = new AtomicReference<>();
        Callback sent = (metadata, e) -> {
            if (e != null) {
                failure.compareAndSet(null, e);
            }
        };
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(props)) {
            for (long i = from; i < to && failure.get() == null; i++) {
                Click c = stream.click(i);
                producer.send(new ProducerRecord<>(topic, key.of(c), c.toCsv()), sent);
                if (ratePerSecond > 0) {
                    long due = start + (i - from + 1) * 1_000_000_000L / ratePerSecond;
                    long wait = due - System.nanoTime();
                    if (wait > 1_000_000) {
                        Thread.sleep(wait / 1_000_000);
                    }
                }
            }
            producer.flush();
        }
        if (failure.get() != null) {
            throw new KafkaException("Sending clicks " + from + "-" + (to - 1) + " to " + topic + " failed", failure.get());
        }
    }

    /** {@code now} (the current second) or epoch milliseconds. */
    static long startMillis(String start) {
        return start.equals("now") ? System.currentTimeMillis() / 1000 * 1000 : Long.parseLong(start);
    }

    public static void main(String[] args) throws Exception {
        ParameterTool params = ParameterTool.fromArgs(args);
        String servers = params.getRequired("bootstrap-servers");
        String topic = params.get("topic", "clicks");
        long from = params.getLong("from", 0);
        long n = params.getLong("clicks", 1_000_000);
        ClickStream stream = new ClickStream(params.getLong("clicks-per-event-second", 10_000),
                params.getLong("users", 100_000), params.getInt("pages", 1_000), params.getInt("duplicate-percent", 10),
                startMillis(params.get("start", Long.toString(ClickStream.DEFAULT_START_MILLIS))));
        Key key = Key.valueOf(params.get("key", "id").toUpperCase(Locale.ROOT));
        long start = System.nanoTime();
        produce(servers, topic, stream, from, from + n, params.getLong("rate", 0), key);
        double s = (System.nanoTime() - start) / 1e9;
        System.out.printf(Locale.ROOT, "Sent clicks %,d-%,d to %s in %.1f s%n", from, from + n - 1, topic, s);
    }
}
