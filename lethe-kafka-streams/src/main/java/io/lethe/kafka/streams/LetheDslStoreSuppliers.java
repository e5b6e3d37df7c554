package io.lethe.kafka.streams;

import org.apache.kafka.streams.state.DslKeyValueParams;
import org.apache.kafka.streams.state.DslSessionParams;
import org.apache.kafka.streams.state.DslStoreSuppliers;
import org.apache.kafka.streams.state.DslWindowParams;
import org.apache.kafka.streams.state.KeyValueBytesStoreSupplier;
import org.apache.kafka.streams.state.SessionBytesStoreSupplier;
import org.apache.kafka.streams.state.WindowBytesStoreSupplier;

/**
 * Puts every store of a DSL topology on Lethe: set {@code dsl.store.suppliers.class} to this class.
 * Windows and sessions that emit only when they close need no separate time-ordered store here: a
 * Lethe session store finds sessions by end time, and a window store scans by start time.
 */
public class LetheDslStoreSuppliers implements DslStoreSuppliers {
    @Override
    public KeyValueBytesStoreSupplier keyValueStore(DslKeyValueParams params) {
        return params.isTimestamped()
                ? LetheStores.persistentTimestampedKeyValueStore(params.name())
                : LetheStores.persistentKeyValueStore(params.name());
    }

    @Override
    public WindowBytesStoreSupplier windowStore(DslWindowParams params) {
        return params.isTimestamped()
                ? LetheStores.persistentTimestampedWindowStore(params.name(), params.retentionPeriod(),
                        params.windowSize(), params.retainDuplicates())
                : LetheStores.persistentWindowStore(params.name(), params.retentionPeriod(), params.windowSize(),
                        params.retainDuplicates());
    }

    @Override
    public SessionBytesStoreSupplier sessionStore(DslSessionParams params) {
        return LetheStores.persistentSessionStore(params.name(), params.retentionPeriod());
    }
}
