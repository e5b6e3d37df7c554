package io.lethe.kafka.streams;

import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.state.KeyValueBytesStoreSupplier;
import org.apache.kafka.streams.state.KeyValueStore;

import java.util.Objects;

/** Supplies Lethe key-value stores, plain or timestamped; see {@link LetheStores}. */
public final class LetheKeyValueBytesStoreSupplier implements KeyValueBytesStoreSupplier {
    /** The metrics scope of Lethe's stores in Kafka Streams' store metrics. */
    public static final String METRICS_SCOPE = "lethe";

    private final String name;
    private final boolean timestamped;

    public LetheKeyValueBytesStoreSupplier(String name, boolean timestamped) {
        this.name = Objects.requireNonNull(name, "name cannot be null");
        this.timestamped = timestamped;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public KeyValueStore<Bytes, byte[]> get() {
        return timestamped ? new LetheTimestampedKeyValueStore(name) : new LetheKeyValueStore(name);
    }

    @Override
    public String metricsScope() {
        return METRICS_SCOPE;
    }
}
