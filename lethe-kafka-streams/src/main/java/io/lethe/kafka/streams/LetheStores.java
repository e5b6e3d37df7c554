package io.lethe.kafka.streams;

import org.apache.kafka.streams.state.KeyValueBytesStoreSupplier;

/**
 * Factory methods for Lethe's stores, in the style of {@link org.apache.kafka.streams.state.Stores}:
 * pass what they return to {@code Stores.keyValueStoreBuilder(...)} or {@code Materialized.as(...)}.
 */
public final class LetheStores {
    private LetheStores() {}

    /** A persistent key-value store. */
    public static KeyValueBytesStoreSupplier persistentKeyValueStore(String name) {
        return new LetheKeyValueBytesStoreSupplier(name, false);
    }

    /** A persistent key-value store whose values carry their timestamps. */
    public static KeyValueBytesStoreSupplier persistentTimestampedKeyValueStore(String name) {
        return new LetheKeyValueBytesStoreSupplier(name, true);
    }
}
