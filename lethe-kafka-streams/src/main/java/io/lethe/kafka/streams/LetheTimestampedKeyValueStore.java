package io.lethe.kafka.streams;

import org.apache.kafka.streams.state.TimestampedBytesStore;

/**
 * A key-value store whose values carry their record's timestamp (8 bytes, then the value), as Kafka
 * Streams' timestamped stores expect: the marker tells Kafka Streams that no conversion is needed.
 */
public class LetheTimestampedKeyValueStore extends LetheKeyValueStore implements TimestampedBytesStore {
    public LetheTimestampedKeyValueStore(String name) {
        super(name);
    }
}
