package io.lethe.kafka.streams;

import io.lethe.engine.Compression;
import io.lethe.engine.LetheException;
import io.lethe.engine.WriteBatch;
import io.lethe.engine.WriteOptions;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.processor.internals.RecordBatchingStateRestoreCallback;
import org.apache.kafka.streams.query.Position;
import org.apache.kafka.streams.query.PositionBound;
import org.apache.kafka.streams.query.Query;
import org.apache.kafka.streams.query.QueryConfig;
import org.apache.kafka.streams.query.QueryResult;
import org.apache.kafka.streams.state.internals.StoreQueryUtils;
import org.slf4j.Logger;

import java.util.Collection;
import java.util.Objects;

/**
 * What Lethe's key-value, window and session stores share: the store's database and position,
 * registration for batched restore at init, flush as a commit point, interactive queries, close.
 */
abstract class LetheStateStore implements StateStore {
    private final String name;
    private final Compression unsetCompression;
    protected StoreDatabase store;
    protected StorePosition position;

    /** A store whose pages are compressed with {@code unsetCompression} unless the options say otherwise. */
    LetheStateStore(String name, Compression unsetCompression) {
        this.name = Objects.requireNonNull(name, "name");
        this.unsetCompression = Objects.requireNonNull(unsetCompression, "unsetCompression");
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public void init(StateStoreContext context, StateStore root) {
        store = StoreDatabase.open(name, context, unsetCompression);
        position = StorePosition.load(name, context);
        StoreMetrics.register(store, context, name);
        opened(context);
        context.register(root, (RecordBatchingStateRestoreCallback) this::restore, position::checkpoint);
    }

    /** After init opened the store, before it registers for restore. */
    protected void opened(StateStoreContext context) {}

    /** Applies a batch of changelog records, which are keyed by store key. */
    protected abstract void restore(Collection<ConsumerRecord<byte[], byte[]>> records);

    /** Makes every write so far durable; subclasses add what their commit point needs. */
    @Override
    public void flush() {
        if (store != null && store.isOpen()) {
            store.commit();
        }
    }

    @Override
    public void close() {
        if (store != null) {
            store.close();
        }
    }

    @Override
    public boolean persistent() {
        return true;
    }

    @Override
    public boolean isOpen() {
        return store != null && store.isOpen();
    }

    @Override
    public <R> QueryResult<R> query(Query<R> query, PositionBound positionBound, QueryConfig config) {
        return StoreQueryUtils.handleBasicQueries(query, positionBound, config, this, position.get(),
                position.context());
    }

    @Override
    public Position getPosition() {
        return position.get();
    }

    protected void write(WriteBatch batch, String what) {
        if (batch.count() == 0) {
            return;
        }
        try {
            store.db().write(WriteOptions.DEFAULT, batch);
        } catch (LetheException e) {
            throw store.failure(what, e);
        }
    }

    /** Logs, in Kafka Streams' words, that a range from a larger key to a smaller one is empty. */
    protected static void warnInvalidRange(Logger log) {
        log.warn("Returning empty iterator for fetch with invalid key range: from > to. This may be due to range"
                + " arguments set in the wrong order, or serdes that don't preserve ordering when lexicographically"
                + " comparing the serialized bytes. Note that the built-in numerical serdes do not follow this for"
                + " negative numbers");
    }
}
