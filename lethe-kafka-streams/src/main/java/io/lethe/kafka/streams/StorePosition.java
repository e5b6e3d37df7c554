package io.lethe.kafka.streams;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.processor.internals.ChangelogRecordDeserializationHelper;
import org.apache.kafka.streams.query.Position;
import org.apache.kafka.streams.state.internals.OffsetCheckpoint;
import org.apache.kafka.streams.state.internals.StoreQueryUtils;

import java.io.File;

/**
 * A store's {@link Position} for interactive queries: the input offsets its contents reflect. It
 * moves with every write from a record, and with the position headers of restored changelog
 * records; it is kept in {@code <task state dir>/<store>.position} across restarts, as Kafka
 * Streams' own stores keep theirs. Guard reads and writes of the store with it.
 */
final class StorePosition {
    private final Position position;
    private final OffsetCheckpoint checkpoint;
    private final StateStoreContext context;
    private final boolean consistencyEnabled;

    private StorePosition(Position position, OffsetCheckpoint checkpoint, StateStoreContext context) {
        this.position = position;
        this.checkpoint = checkpoint;
        this.context = context;
        this.consistencyEnabled = StreamsConfig.InternalConfig.getBoolean(context.appConfigs(),
                StreamsConfig.InternalConfig.IQ_CONSISTENCY_OFFSET_VECTOR_ENABLED, false);
    }

    static StorePosition load(String storeName, StateStoreContext context) {
        OffsetCheckpoint file = new OffsetCheckpoint(new File(context.stateDir(), storeName + ".position"));
        return new StorePosition(StoreQueryUtils.readPositionFromCheckpoint(file), file, context);
    }

    /** The position object itself: queries and writes synchronize on it. */
    Position get() {
        return position;
    }

    StateStoreContext context() {
        return context;
    }

    /** After a write from the record being processed. Call holding {@link #get()}'s lock. */
    void update() {
        StoreQueryUtils.updatePosition(position, context);
    }

    /** After restoring a changelog record. Call holding {@link #get()}'s lock. */
    void restored(ConsumerRecord<byte[], byte[]> record) {
        ChangelogRecordDeserializationHelper.applyChecksAndUpdatePosition(record, consistencyEnabled, position);
    }

    void checkpoint() {
        StoreQueryUtils.checkpointPosition(checkpoint, position);
    }
}
