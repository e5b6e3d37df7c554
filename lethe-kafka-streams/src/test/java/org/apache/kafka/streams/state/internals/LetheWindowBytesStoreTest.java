package org.apache.kafka.streams.state.internals;

import io.lethe.kafka.streams.LetheStores;

import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.WindowStore;

import static java.time.Duration.ofMillis;

/**
 * Kafka Streams' own window store suite, every case, on a Lethe window store under the metered and
 * change-logging layers. It lives in Kafka Streams' package because the suite's hooks are
 * package-private.
 */
class LetheWindowBytesStoreTest extends AbstractWindowBytesStoreTest {
    @Override
    <K, V> WindowStore<K, V> buildWindowStore(long retentionPeriod, long windowSize, boolean retainDuplicates,
                                              Serde<K> keySerde, Serde<V> valueSerde) {
        return Stores.windowStoreBuilder(
                        LetheStores.persistentWindowStore("lethe-window-store", ofMillis(retentionPeriod),
                                ofMillis(windowSize), retainDuplicates),
                        keySerde, valueSerde)
                .build();
    }
}
