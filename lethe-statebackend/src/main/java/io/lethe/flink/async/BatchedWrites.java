package io.lethe.flink.async;

import io.lethe.engine.ColumnFamilyHandle;
import io.lethe.engine.LetheDb;
import io.lethe.engine.WriteBatch;
import io.lethe.engine.WriteOptions;
import io.lethe.flink.state.AbstractLetheState;

import org.apache.flink.runtime.asyncprocessing.StateRequest;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The writes of one key each (update, add, put, remove, clear of one entry) of a batch of state
 * requests, gathered in the order they were issued into one engine write batch, written when
 * flushed; their requests complete then, or fail together if the write fails. The caller flushes
 * before a request reads a key {@link #pending} reports, and before any request whose keys it
 * cannot name. The batch's buffer is kept from flush to flush. Used on the task thread only.
 */
final class BatchedWrites {
    private final WriteBatch batch = new WriteBatch(64 << 10);
    private final List<StateRequest<?, ?, ?, ?>> requests = new ArrayList<>();
    private final Set<EngineKey> keys = new HashSet<>();
    private LetheDb db;
    private long writes;
    private long entries;

    /** Functions that write into a state, as its request asks. */
    @FunctionalInterface
    interface Write {
        void run() throws Exception;
    }

    /**
     * Runs {@code write} with {@code store}'s writes of one key going into the batch, and keeps
     * {@code request} to complete when the batch is written. A write that fails here fails its
     * request alone, with nothing of it in the batch.
     */
    void add(AbstractLetheState<?, ?, ?> store, byte[] key, StateRequest<?, ?, ?, ?> request, Write write) {
        int before = batch.count();
        store.writeInto(batch);
        try {
            write.run();
        } catch (Exception e) {
            if (batch.count() != before) {
                throw new IllegalStateException("a failed write left entries in the write batch", e);
            }
            RequestOutcome.fail(request, e);
            return;
        } finally {
            store.writeInto(null);
        }
        db = store.db();
        requests.add(request);
        keys.add(EngineKey.of(store.columnFamily(), key));
    }

    /** Whether a gathered write, not written yet, writes {@code key} in {@code cf}. */
    boolean pending(ColumnFamilyHandle cf, byte[] key) {
        return !keys.isEmpty() && keys.contains(EngineKey.of(cf, key));
    }

    /**
     * Writes the gathered writes and completes their requests; false if there were none. The
     * batch is let go before any future completes, so a callback that runs at once may serve a
     * new batch.
     */
    boolean flush() {
        if (requests.isEmpty()) {
            return false;
        }
        List<StateRequest<?, ?, ?, ?>> written = new ArrayList<>(requests);
        requests.clear();
        keys.clear();
        Exception failure = null;
        try {
            if (batch.count() > 0) {
                entries += batch.count();
                writes++;
                db.write(WriteOptions.DEFAULT, batch);
            }
        } catch (Exception e) {
            failure = e;
        } finally {
            batch.clear();
        }
        for (StateRequest<?, ?, ?, ?> request : written) {
            if (failure == null) {
                RequestOutcome.complete(request, null);
            } else {
                RequestOutcome.fail(request, failure);
            }
        }
        return true;
    }

    /** Write batches written so far, and the entries in them (tests, metrics). */
    long writes() {
        return writes;
    }

    long entries() {
        return entries;
    }
}
