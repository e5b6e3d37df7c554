package io.lethe.it;

import io.lethe.examples.TopicReader;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * What holds a {@code read_committed} reader of a topic back, for failure messages: per partition
 * the last stable offset against the end offset, the producers with a transaction open on it (and
 * the offset where it started), and the transactional ids whose transactions are not finished.
 * A transaction left open by a process that died blocks every later record of its partitions
 * until it is aborted or times out.
 */
final class OpenTransactions {
    private OpenTransactions() {}

    static String describe(KafkaBroker broker, String topic) {
        StringBuilder s = new StringBuilder("Topic ").append(topic).append(":");
        try (Admin admin = broker.admin()) {
            List<TopicPartition> partitions = TopicReader.partitions(admin, topic);
            Map<TopicPartition, Long> end = TopicReader.endOffsets(admin, partitions, IsolationLevel.READ_UNCOMMITTED);
            Map<TopicPartition, Long> stable = TopicReader.endOffsets(admin, partitions, IsolationLevel.READ_COMMITTED);
            Map<TopicPartition, List<ProducerState>> producers = new TreeMap<>(
                    (a, b) -> Integer.compare(a.partition(), b.partition()));
            admin.describeProducers(partitions).all().get(30, TimeUnit.SECONDS)
                    .forEach((tp, d) -> producers.put(tp, d.activeProducers()));
            for (TopicPartition tp : partitions) {
                s.append("\n  partition ").append(tp.partition()).append(": last stable offset ").append(stable.get(tp))
                        .append(", end offset ").append(end.get(tp));
                for (ProducerState p : producers.getOrDefault(tp, List.of())) {
                    if (p.currentTransactionStartOffset().isPresent()) {
                        s.append("; producer ").append(p.producerId()).append(" (epoch ").append(p.producerEpoch())
                                .append(") has a transaction open since offset ")
                                .append(p.currentTransactionStartOffset().getAsLong());
                    }
                }
            }
            List<String> unfinished = admin.listTransactions().all().get(30, TimeUnit.SECONDS).stream()
                    .filter(t -> t.state() != TransactionState.COMPLETE_COMMIT && t.state() != TransactionState.COMPLETE_ABORT
                            && t.state() != TransactionState.EMPTY)
                    .map(TransactionListing::transactionalId).toList();
            if (!unfinished.isEmpty()) {
                Map<String, TransactionDescription> described = admin.describeTransactions(unfinished).all()
                        .get(30, TimeUnit.SECONDS);
                described.forEach((id, d) -> s.append("\n  transaction ").append(id).append(": ").append(d.state())
                        .append(", producer ").append(d.producerId()).append(" epoch ").append(d.producerEpoch())
                        .append(", partitions ").append(d.topicPartitions()));
            }
        } catch (Exception e) {
            s.append(" (could not describe it: ").append(e).append(")");
        }
        return s.toString();
    }
}
