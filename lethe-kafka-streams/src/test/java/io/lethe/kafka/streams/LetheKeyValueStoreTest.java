package io.lethe.kafka.streams;

import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.internals.AbstractKeyValueStoreTest;

/** Kafka Streams' own key-value store suite, every case, on a Lethe store under the metered layer. */
class LetheKeyValueStoreTest extends AbstractKeyValueStoreTest {
    @Override
    @SuppressWarnings("unchecked")
    protected <K, V> KeyValueStore<K, V> createKeyValueStore(StateStoreContext context) {
        KeyValueStore<K, V> store = Stores.keyValueStoreBuilder(
                        LetheStores.persistentKeyValueStore("my-store"),
                        (Serde<K>) context.keySerde(),
                        (Serde<V>) context.valueSerde())
                .build();
        store.init(context, store);
        return store;
    }
}
