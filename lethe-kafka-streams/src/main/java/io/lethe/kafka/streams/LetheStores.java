package io.lethe.kafka.streams;

import org.apache.kafka.streams.state.KeyValueBytesStoreSupplier;
import org.apache.kafka.streams.state.SessionBytesStoreSupplier;
import org.apache.kafka.streams.state.WindowBytesStoreSupplier;

import java.time.Duration;

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

    /**
     * A persistent window store: windows of {@code windowSize} kept for {@code retentionPeriod} of
     * stream time; with {@code retainDuplicates}, every put is kept (as stream-stream joins need).
     */
    public static WindowBytesStoreSupplier persistentWindowStore(String name, Duration retentionPeriod,
                                                                 Duration windowSize, boolean retainDuplicates) {
        return new LetheWindowBytesStoreSupplier(name, millis(retentionPeriod, "retentionPeriod"),
                millis(windowSize, "windowSize"), retainDuplicates, false);
    }

    /** A persistent window store whose values carry their timestamps. */
    public static WindowBytesStoreSupplier persistentTimestampedWindowStore(String name, Duration retentionPeriod,
                                                                            Duration windowSize,
                                                                            boolean retainDuplicates) {
        return new LetheWindowBytesStoreSupplier(name, millis(retentionPeriod, "retentionPeriod"),
                millis(windowSize, "windowSize"), retainDuplicates, true);
    }

    /** A persistent session store keeping sessions for {@code retentionPeriod} of stream time after they end. */
    public static SessionBytesStoreSupplier persistentSessionStore(String name, Duration retentionPeriod) {
        return new LetheSessionBytesStoreSupplier(name, millis(retentionPeriod, "retentionPeriod"));
    }

    private static long millis(Duration d, String what) {
        java.util.Objects.requireNonNull(d, what + " cannot be null");
        try {
            return d.toMillis();
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException(what + " cannot be represented as long milliseconds", e);
        }
    }
}
