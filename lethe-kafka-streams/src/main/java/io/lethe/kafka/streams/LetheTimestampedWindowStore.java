package io.lethe.kafka.streams;

import org.apache.kafka.streams.state.TimestampedBytesStore;

/** A window store whose values carry their record's timestamp (8 bytes, then the value). */
public class LetheTimestampedWindowStore extends LetheWindowStore implements TimestampedBytesStore {
    public LetheTimestampedWindowStore(String name, long retentionPeriod, long windowSize, boolean retainDuplicates) {
        super(name, retentionPeriod, windowSize, retainDuplicates);
    }
}
