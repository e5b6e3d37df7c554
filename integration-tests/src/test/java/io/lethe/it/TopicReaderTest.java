package io.lethe.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lethe.examples.TopicReader;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * The check the tests make of what a finished job wrote: read only once every transaction on the
 * topic is decided, and not before.
 */
class TopicReaderTest {
    @RegisterExtension
    static final KafkaBrokerExtension KAFKA = new KafkaBrokerExtension();

    @Test
    void waitsForOpenTransactionsAndReadsTheirRecordsOnceCommitted() throws Exception {
        KAFKA.broker().createTopic("decided", 2);
        String servers = KAFKA.broker().bootstrapServers();
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, servers,
                ProducerConfig.TRANSACTIONAL_ID_CONFIG, "topic-reader-test",
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName(),
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName()))) {
            producer.initTransactions();
            producer.beginTransaction();
            for (int i = 0; i < 3; i++) {
                producer.send(new ProducerRecord<>("decided", i % 2, null, "line " + i)).get();
            }
            assertEquals(List.of(), KAFKA.broker().readCommitted("decided"));
            IllegalStateException open = assertThrows(IllegalStateException.class,
                    () -> TopicReader.awaitDecided(servers, "decided", Duration.ofMillis(500)));
            assertTrue(open.getMessage().contains("still open"), open.getMessage());

            producer.commitTransaction();
        }
        assertEquals(List.of("line 0", "line 1", "line 2"), KAFKA.broker().readDecided("decided"));
    }
}
