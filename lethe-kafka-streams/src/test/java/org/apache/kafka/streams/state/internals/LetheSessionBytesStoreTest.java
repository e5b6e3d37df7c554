package org.apache.kafka.streams.state.internals;

import io.lethe.kafka.streams.LetheStores;

import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.streams.state.SessionStore;
import org.apache.kafka.streams.state.Stores;

import static java.time.Duration.ofMillis;

/**
 * Kafka Streams' own session store suite, every case, on a Lethe session store under the metered and
 * change-logging layers. It lives in Kafka Streams' package because the suite's hooks are
 * package-private.
 */
class LetheSessionBytesStoreTest extends AbstractSessionBytesStoreTest {
    /**
     * The suite asks the store type two things: whether sessions can be found by end time alone
     * (RocksDB's plain session store cannot; Lethe's can) and whether expiry is strict or by
     * in-memory segments. Lethe answers as a persistent store that finds sessions by end time.
     */
    @Override
    StoreType storeType() {
        return StoreType.RocksDBTimeOrderedSessionStoreWithIndex;
    }

    @Override
    <K, V> SessionStore<K, V> buildSessionStore(long retentionPeriod, Serde<K> keySerde, Serde<V> valueSerde) {
        return Stores.sessionStoreBuilder(
                        LetheStores.persistentSessionStore("lethe-session-store", ofMillis(retentionPeriod)),
                        keySerde, valueSerde)
                .build();
    }
}
