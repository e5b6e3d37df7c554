package io.lethe.kafka.streams;

import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.state.SessionBytesStoreSupplier;
import org.apache.kafka.streams.state.SessionStore;

import java.util.Objects;

/** Supplies Lethe session stores; see {@link LetheStores}. */
public final class LetheSessionBytesStoreSupplier implements SessionBytesStoreSupplier {
    private final String name;
    private final long retentionPeriod;

    public LetheSessionBytesStoreSupplier(String name, long retentionPeriod) {
        this.name = Objects.requireNonNull(name, "name cannot be null");
        if (retentionPeriod < 0) {
            throw new IllegalArgumentException("retentionPeriod cannot be negative");
        }
        this.retentionPeriod = retentionPeriod;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public SessionStore<Bytes, byte[]> get() {
        return new LetheSessionStore(name, retentionPeriod);
    }

    @Override
    public String metricsScope() {
        return LetheKeyValueBytesStoreSupplier.METRICS_SCOPE;
    }

    /** One segment for all time: the store is one database, and expires by horizon, not by segment. */
    @Override
    public long segmentIntervalMs() {
        return LetheSessionStore.SEGMENT_INTERVAL;
    }

    @Override
    public long retentionPeriod() {
        return retentionPeriod;
    }
}
