package io.lethe.examples;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.stream.Collectors;

/** Reads a topic of text records from its beginning to its end, as a check of what an application wrote. */
public final class TopicReader {
    private TopicReader() {}

    /**
     * {@link #readCommitted} for a topic whose writers have stopped: first waits until every
     * transaction on it is decided. A producer's commit returns once the coordinator has logged the
     * decision; the commit markers that make the records readable reach the topic's partitions
     * after that, so a read right after the writers stopped may end before their last records.
     */
    public static void readDecided(String bootstrapServers, String topic, Duration timeout,
            Consumer<ConsumerRecord<String, String>> each) {
        awaitDecided(bootstrapServers, topic, timeout);
        readCommitted(bootstrapServers, topic, timeout, each);
    }

    /**
     * Waits until no transaction is open on {@code topic}: its last stable offsets (where
     * read_committed consumers stop) have reached its end offsets. Fails after {@code timeout},
     * naming both.
     */
    public static void awaitDecided(String bootstrapServers, String topic, Duration timeout) {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers))) {
            List<TopicPartition> partitions = partitions(admin, topic);
            long deadline = System.nanoTime() + timeout.toNanos();
            while (true) {
                Map<TopicPartition, Long> stable = endOffsets(admin, partitions, IsolationLevel.READ_COMMITTED);
                Map<TopicPartition, Long> written = endOffsets(admin, partitions, IsolationLevel.READ_UNCOMMITTED);
                if (stable.equals(written)) {
                    return;
                }
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("A transaction on " + topic + " is still open after "
                            + timeout.toSeconds() + " s: last stable offsets " + stable + ", end offsets " + written);
                }
                Thread.sleep(100);
            }
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("Could not read the offsets of " + topic, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while waiting for the transactions on " + topic, e);
        }
    }

    /** The partitions of {@code topic}. */
    public static List<TopicPartition> partitions(Admin admin, String topic)
            throws ExecutionException, InterruptedException, TimeoutException {
        return admin.describeTopics(List.of(topic)).allTopicNames().get(60, TimeUnit.SECONDS).get(topic).partitions()
                .stream().map(p -> new TopicPartition(topic, p.partition())).toList();
    }

    /**
     * Per partition, where a consumer of {@code isolation} stops: the end offset (read_uncommitted)
     * or the last stable offset (read_committed).
     */
    public static Map<TopicPartition, Long> endOffsets(Admin admin, List<TopicPartition> partitions,
            IsolationLevel isolation) throws ExecutionException, InterruptedException, TimeoutException {
        Map<TopicPartition, OffsetSpec> latest = partitions.stream()
                .collect(Collectors.toMap(tp -> tp, tp -> OffsetSpec.latest()));
        return admin.listOffsets(latest, new ListOffsetsOptions(isolation)).all().get(60, TimeUnit.SECONDS)
                .entrySet().stream().collect(Collectors.toMap(Map.Entry::getKey, e -> e.getValue().offset()));
    }

    /**
     * Hands every committed record of {@code topic} to {@code each}, partition by partition in offset
     * order within a partition, up to the end offsets as of the start (under read_committed, the last
     * stable offsets); fails after {@code timeout}.
     */
    public static void readCommitted(String bootstrapServers, String topic, Duration timeout,
            Consumer<ConsumerRecord<String, String>> each) {
        Map<String, Object> props = Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
                ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed",
                ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 10_000,
                ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName(),
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props)) {
            List<TopicPartition> partitions = consumer.partitionsFor(topic).stream()
                    .map(p -> new TopicPartition(topic, p.partition())).toList();
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> end = consumer.endOffsets(partitions);
            long deadline = System.nanoTime() + timeout.toNanos();
            while (partitions.stream().anyMatch(tp -> consumer.position(tp) < end.get(tp))) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("Reading " + topic + " did not reach its end offsets " + end
                            + " within " + timeout.toSeconds() + " s");
                }
                consumer.poll(Duration.ofMillis(200)).forEach(each);
            }
        }
    }
}
