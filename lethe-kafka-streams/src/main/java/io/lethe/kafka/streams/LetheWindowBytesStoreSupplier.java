package io.lethe.kafka.streams;

import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.state.WindowBytesStoreSupplier;
import org.apache.kafka.streams.state.WindowStore;

import java.util.Objects;

/** Supplies Lethe window stores, plain or timestamped; see {@link LetheStores}. */
public final class LetheWindowBytesStoreSupplier implements WindowBytesStoreSupplier {
    private final String name;
    private final long retentionPeriod;
    private final long windowSize;
    private final boolean retainDuplicates;
    private final boolean timestamped;

    public LetheWindowBytesStoreSupplier(String name, long retentionPeriod, long windowSize, boolean retainDuplicates,
                                         boolean timestamped) {
        this.name = Objects.requireNonNull(name, "name cannot be null");
        if (retentionPeriod < 0) {
            throw new IllegalArgumentException("retentionPeriod cannot be negative");
        }
        if (windowSize < 0) {
            throw new IllegalArgumentException("windowSize cannot be negative");
        }
        if (windowSize > retentionPeriod) {
            throw new IllegalArgumentException("The retention period of the window store " + name
                    + " must be no smaller than its window size. Got size=[" + windowSize + "], retention=["
                    + retentionPeriod + "]");
        }
        this.retentionPeriod = retentionPeriod;
        this.windowSize = windowSize;
        this.retainDuplicates = retainDuplicates;
        this.timestamped = timestamped;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public WindowStore<Bytes, byte[]> get() {
        return timestamped
                ? new LetheTimestampedWindowStore(name, retentionPeriod, windowSize, retainDuplicates)
                : new LetheWindowStore(name, retentionPeriod, windowSize, retainDuplicates);
    }

    @Override
    public String metricsScope() {
        return LetheKeyValueBytesStoreSupplier.METRICS_SCOPE;
    }

    /** One segment for all time: the store is one database, and expires by horizon, not by segment. */
    @Override
    public long segmentIntervalMs() {
        return LetheWindowStore.SEGMENT_INTERVAL;
    }

    @Override
    public long windowSize() {
        return windowSize;
    }

    @Override
    public boolean retainDuplicates() {
        return retainDuplicates;
    }

    @Override
    public long retentionPeriod() {
        return retentionPeriod;
    }
}
