package io.lethe.flink.async;

import io.lethe.engine.ColumnFamilyHandle;
import io.lethe.engine.LetheDb;
import io.lethe.engine.MultiGetBatch;

import org.apache.flink.runtime.asyncprocessing.StateRequest;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The point reads of a batch of state requests (a value, a list, an accumulator, one entry of a
 * map), gathered per column family and looked up with one multi-get each when flushed: one call
 * into the engine per column family, which walks the sorted keys once through memtables and files
 * and spreads them over its read threads.
 *
 * <p>Reads commute with each other, so a gathered read may be answered after requests issued
 * later, but nothing may change its key before it is: the caller flushes before a request that
 * writes a key {@link #pending} reports, and before any request whose keys it cannot name. Buffers
 * are kept from batch to batch. Used on the task thread only.
 */
final class BatchedReads {
    /** Turns what a lookup found (null: nothing) into the request's result. */
    @FunctionalInterface
    interface Decoder {
        Object decode(byte[] stored) throws Exception;
    }

    /** The reads of one column family. */
    private static final class Group {
        final MultiGetBatch batch = new MultiGetBatch(64);
        final List<StateRequest<?, ?, ?, ?>> requests = new ArrayList<>();
        final List<Decoder> decoders = new ArrayList<>();
        LetheDb db;
    }

    private final Map<ColumnFamilyHandle, Group> groups = new IdentityHashMap<>();
    private final Set<EngineKey> keys = new HashSet<>();
    private long lookups;
    private long reads;

    void add(LetheDb db, ColumnFamilyHandle cf, byte[] key, StateRequest<?, ?, ?, ?> request, Decoder decoder) {
        Group group = groups.computeIfAbsent(cf, c -> new Group());
        group.db = db;
        group.batch.add(key);
        group.requests.add(request);
        group.decoders.add(decoder);
        keys.add(EngineKey.of(cf, key));
    }

    /** Whether a gathered read, not answered yet, looks up {@code key} in {@code cf}. */
    boolean pending(ColumnFamilyHandle cf, byte[] key) {
        return !keys.isEmpty() && keys.contains(EngineKey.of(cf, key));
    }

    /**
     * Looks up every gathered read and completes its request; false if there was none. The reads
     * are let go before any future completes, so a callback that runs at once (a test's mailbox)
     * may issue and serve a new batch.
     */
    boolean flush() {
        if (keys.isEmpty()) {
            return false;
        }
        keys.clear();
        List<StateRequest<?, ?, ?, ?>> requests = new ArrayList<>();
        List<Object> results = new ArrayList<>();
        for (Map.Entry<ColumnFamilyHandle, Group> e : groups.entrySet()) {
            if (!e.getValue().requests.isEmpty()) {
                lookUp(e.getKey(), e.getValue(), requests, results);
            }
        }
        for (int i = 0; i < requests.size(); i++) {
            if (results.get(i) instanceof Failure f) {
                RequestOutcome.fail(requests.get(i), f.cause());
            } else {
                RequestOutcome.complete(requests.get(i), results.get(i));
            }
        }
        return true;
    }

    /** Multi-gets served so far, and the reads they answered (tests, metrics). */
    long lookups() {
        return lookups;
    }

    long reads() {
        return reads;
    }

    /** A read that failed: its request fails with the cause. */
    private record Failure(Exception cause) {}

    /** Looks up a group's reads and hands back each request with its result, emptying the group. */
    private void lookUp(ColumnFamilyHandle cf, Group group, List<StateRequest<?, ?, ?, ?>> requests,
            List<Object> results) {
        try {
            group.db.multiGet(cf, group.batch);
            lookups++;
            reads += group.requests.size();
            for (int i = 0; i < group.requests.size(); i++) {
                results.add(decode(group.decoders.get(i), group.batch.value(i)));
            }
        } catch (Exception e) {
            while (results.size() < requests.size() + group.requests.size()) {
                results.add(new Failure(e));
            }
        } finally {
            requests.addAll(group.requests);
            group.batch.clear();
            group.requests.clear();
            group.decoders.clear();
        }
    }

    private static Object decode(Decoder decoder, byte[] stored) {
        try {
            return decoder.decode(stored);
        } catch (Exception e) {
            return new Failure(e);
        }
    }
}
