package io.lethe.flink.async;

import io.lethe.engine.ColumnFamilyHandle;
import io.lethe.flink.state.AbstractLetheState;

import org.apache.flink.runtime.asyncprocessing.StateRequest;

import java.util.HashSet;
import java.util.Set;

/**
 * Gathers the writes of one key each of a batch of state requests into a {@link WriteStep}, in the
 * order they were issued: each is serialized into the step's write batch at once, with the state's
 * own serializers. The caller takes the step before a request reads a key {@link #pending} reports,
 * and before any request whose keys it cannot name. Used on the task thread only.
 */
final class BatchedWrites {
    private final BatchCounts counts;
    private final Set<EngineKey> keys = new HashSet<>();
    private WriteStep step;

    BatchedWrites(BatchCounts counts) {
        this.counts = counts;
    }

    /** Functions that write into a state, as its request asks. */
    @FunctionalInterface
    interface Write {
        void run() throws Exception;
    }

    /**
     * Runs {@code write} with {@code store}'s writes of one key going into the step's batch, and
     * keeps {@code request} to complete when the batch is written. Returns what failed, with
     * nothing of the write in the batch, or null.
     */
    Exception add(AbstractLetheState<?, ?, ?> store, byte[] key, StateRequest<?, ?, ?, ?> request, Write write) {
        if (step == null) {
            step = new WriteStep(counts);
        }
        int before = step.batch.count();
        store.writeInto(step.batch);
        try {
            write.run();
        } catch (Exception e) {
            if (step.batch.count() != before) {
                throw new IllegalStateException("a failed write left entries in the write batch", e);
            }
            return e;
        } finally {
            store.writeInto(null);
        }
        step.db = store.db();
        step.requests.add(request);
        keys.add(EngineKey.of(store.columnFamily(), key));
        return null;
    }

    /** Whether a gathered write, not taken yet, writes {@code key} in {@code cf}. */
    boolean pending(ColumnFamilyHandle cf, byte[] key) {
        return !keys.isEmpty() && keys.contains(EngineKey.of(cf, key));
    }

    /** The writes gathered so far (null: none); gathering starts again empty. */
    WriteStep take() {
        WriteStep taken = step;
        step = null;
        keys.clear();
        return taken;
    }
}
