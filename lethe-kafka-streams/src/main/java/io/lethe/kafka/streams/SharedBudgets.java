package io.lethe.kafka.streams;

import io.lethe.engine.LetheException;
import io.lethe.engine.MemoryBudget;

import java.util.HashMap;
import java.util.Map;

/**
 * The memory budgets Lethe stores share ({@code lethe.memory.budget.bytes}): one per application id,
 * size and split in this JVM, so every store of every task and stream thread of an application
 * counts its page cache, write buffers and open tables against one capacity, as a bounded-memory
 * RocksDB config setter shares one cache between Kafka Streams' RocksDB stores. A budget is created
 * when the first store on it opens its engine and closed when the last one closes.
 */
final class SharedBudgets {
    /** What identifies a shared budget. */
    record Key(String applicationId, long bytes, double writeBufferRatio, boolean boundOpenTables) {}

    private static final class Shared {
        final MemoryBudget budget;
        int leases;

        Shared(MemoryBudget budget) {
            this.budget = budget;
        }
    }

    private static final Map<Key, Shared> SHARED = new HashMap<>();

    private SharedBudgets() {}

    /** The budget of {@code key}, created if no store holds it; each call is a lease to give back. */
    static synchronized MemoryBudget acquire(Key key) throws LetheException {
        Shared s = SHARED.get(key);
        if (s == null) {
            s = new Shared(MemoryBudget.create(key.bytes(), key.writeBufferRatio(), key.boundOpenTables()));
            SHARED.put(key, s);
        }
        s.leases++;
        return s.budget;
    }

    /** Gives a lease back; the last one closes the budget (engines opened on it keep it until they close). */
    static synchronized void release(Key key) {
        Shared s = SHARED.get(key);
        if (s != null && --s.leases == 0) {
            SHARED.remove(key);
            s.budget.close();
        }
    }

    /** What the budget of {@code key} holds now, or null when no store holds it. */
    static synchronized MemoryBudget.Usage usage(Key key) {
        Shared s = SHARED.get(key);
        return s == null ? null : s.budget.usage();
    }
}
