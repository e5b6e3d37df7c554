package io.lethe.kafka.streams;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.test.InternalMockProcessorContext;
import org.apache.kafka.test.StreamsTestUtils;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Map;
import java.util.stream.Collectors;

/** A store's engine metrics appear among Kafka Streams' store metrics, move with work, and leave with the store. */
class StoreMetricsTest {
    @TempDir
    Path dir;

    @Test
    void engineMetricsAreStoreMetrics() throws Exception {
        InternalMockProcessorContext<?, ?> context = new InternalMockProcessorContext<>(dir.toFile(), Serdes.String(),
                Serdes.String(), new StreamsConfig(StreamsTestUtils.getStreamsConfig()));
        KeyValueStore<String, String> store = Stores.keyValueStoreBuilder(
                LetheStores.persistentKeyValueStore("counted"), Serdes.String(), Serdes.String())
                .withLoggingDisabled().build();
        store.init(context, store);
        for (int i = 0; i < 1000; i++) {
            store.put("k" + i, "v".repeat(100));
        }
        store.flush();
        Thread.sleep(1100);  // past the gauges' snapshot age
        Map<String, Object> lethe = ours(context);
        assertTrue(lethe.containsKey("bytes-written-wal"), lethe.keySet().toString());
        assertTrue((Long) lethe.get("user-bytes-written") > 100_000, lethe.toString());
        assertEquals(1000L, lethe.get("entries"), "the flush wrote the memtable out: " + lethe);
        assertTrue((Long) lethe.get("bytes-written-flush") > 0, lethe.toString());
        assertEquals(0L, lethe.get("horizon"));
        assertEquals(-1L, lethe.get("oldest-delete-key-on-disk"), "all in the memtable, nothing on disk");
        store.close();
        assertTrue(ours(context).isEmpty(), "the store's metrics leave with it");
    }

    /** This store's metrics by name: group stream-state-metrics, tag lethe-state-id. */
    private static Map<String, Object> ours(InternalMockProcessorContext<?, ?> context) {
        Map<MetricName, ? extends Metric> all = context.metrics().metrics();
        return all.entrySet().stream()
                .filter(e -> e.getKey().group().equals("stream-state-metrics")
                        && "counted".equals(e.getKey().tags().get("lethe-state-id")))
                .collect(Collectors.toMap(e -> e.getKey().name(), e -> e.getValue().metricValue()));
    }
}
