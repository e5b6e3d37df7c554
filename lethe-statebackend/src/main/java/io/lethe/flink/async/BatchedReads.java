package io.lethe.flink.async;

import io.lethe.engine.ColumnFamilyHandle;
import io.lethe.engine.LetheDb;
import io.lethe.flink.state.StoredReader;

import org.apache.flink.runtime.asyncprocessing.StateRequest;

import java.util.HashSet;
import java.util.Set;

/**
 * Gathers the point reads of a batch of state requests into a {@link ReadStep}. Reads commute with
 * each other, so a gathered read may be looked up after requests issued later, but nothing may
 * change its key before it is: the caller takes the step before a request that writes a key
 * {@link #pending} reports, and before any request whose keys it cannot name. Used on the task
 * thread only.
 */
final class BatchedReads {
    private final BatchCounts counts;
    private final Set<EngineKey> keys = new HashSet<>();
    private ReadStep step;

    BatchedReads(BatchCounts counts) {
        this.counts = counts;
    }

    void add(LetheDb db, ColumnFamilyHandle cf, byte[] key, StateRequest<?, ?, ?, ?> request, StoredReader<?> reader) {
        if (step == null) {
            step = new ReadStep(counts);
        }
        step.add(db, cf, key, request, reader);
        keys.add(EngineKey.of(cf, key));
    }

    /** Whether a gathered read, not taken yet, looks up {@code key} in {@code cf}. */
    boolean pending(ColumnFamilyHandle cf, byte[] key) {
        return !keys.isEmpty() && keys.contains(EngineKey.of(cf, key));
    }

    /** The reads gathered so far (null: none); gathering starts again empty. */
    ReadStep take() {
        ReadStep taken = step;
        step = null;
        keys.clear();
        return taken;
    }
}
