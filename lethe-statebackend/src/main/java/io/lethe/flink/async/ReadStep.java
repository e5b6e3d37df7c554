package io.lethe.flink.async;

import io.lethe.engine.ColumnFamilyHandle;
import io.lethe.engine.LetheDb;
import io.lethe.engine.MultiGetBatch;
import io.lethe.flink.state.StoredReader;

import org.apache.flink.runtime.asyncprocessing.StateRequest;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * Point reads of state requests (a value, a list, an accumulator, one entry of a map) that commute
 * with each other: one multi-get per column family, which walks the sorted keys once through
 * memtables and files and spreads them over the engine's read threads. Filled on the task thread
 * ({@link BatchedReads}); looked up and decoded on the serving thread, with readers of its own.
 */
final class ReadStep implements ServedBatch.Step {
    /** The reads of one column family. */
    private static final class Group {
        final MultiGetBatch batch = new MultiGetBatch(64);
        final List<StateRequest<?, ?, ?, ?>> requests = new ArrayList<>();
        final List<StoredReader<?>> readers = new ArrayList<>();
        final List<Object> results = new ArrayList<>();
        LetheDb db;
    }

    private final Map<ColumnFamilyHandle, Group> groups = new IdentityHashMap<>();
    private final BatchCounts counts;

    ReadStep(BatchCounts counts) {
        this.counts = counts;
    }

    void add(LetheDb db, ColumnFamilyHandle cf, byte[] key, StateRequest<?, ?, ?, ?> request, StoredReader<?> reader) {
        Group group = groups.computeIfAbsent(cf, c -> new Group());
        group.db = db;
        group.batch.add(key);
        group.requests.add(request);
        group.readers.add(reader);
    }

    @Override
    public int requests() {
        int n = 0;
        for (Group group : groups.values()) {
            n += group.requests.size();
        }
        return n;
    }

    @Override
    public void run() {
        for (Map.Entry<ColumnFamilyHandle, Group> e : groups.entrySet()) {
            lookUp(e.getKey(), e.getValue());
        }
    }

    @Override
    public void complete() {
        for (Group group : groups.values()) {
            for (int i = 0; i < group.requests.size(); i++) {
                RequestOutcome.settle(group.requests.get(i), group.results.get(i));
            }
        }
    }

    @Override
    public void fail(Throwable cause) {
        for (Group group : groups.values()) {
            group.requests.forEach(r -> RequestOutcome.fail(r, cause));
        }
    }

    /** Looks up a group's reads and decodes each result; a failed lookup fails them all, a failed decode one. */
    private void lookUp(ColumnFamilyHandle cf, Group group) {
        try {
            group.db.multiGet(cf, group.batch);
        } catch (Exception e) {
            group.requests.forEach(r -> group.results.add(new RequestOutcome.Failure(e)));
            return;
        }
        counts.lookedUp(group.requests.size());
        for (int i = 0; i < group.requests.size(); i++) {
            try {
                group.results.add(group.readers.get(i).read(group.batch.value(i)));
            } catch (Exception e) {
                group.results.add(new RequestOutcome.Failure(e));
            }
        }
    }
}
