package io.lethe.flink.async;

import java.util.concurrent.atomic.LongAdder;

/** What batches did so far: multi-gets and the point reads in them, write batches and their entries (tests, metrics). */
final class BatchCounts {
    private final LongAdder lookups = new LongAdder();
    private final LongAdder reads = new LongAdder();
    private final LongAdder writes = new LongAdder();
    private final LongAdder entries = new LongAdder();

    void lookedUp(int keys) {
        lookups.increment();
        reads.add(keys);
    }

    void wrote(int batchEntries) {
        writes.increment();
        entries.add(batchEntries);
    }

    /** {multi-gets, reads in them, write batches, entries in them}. */
    long[] snapshot() {
        return new long[] {lookups.sum(), reads.sum(), writes.sum(), entries.sum()};
    }
}
