package io.lethe.flink.async;

import java.util.concurrent.atomic.LongAdder;

/**
 * What the executor did so far: batches of requests and the requests in them, those handed to the
 * request pipeline's thread, multi-gets and the point reads in them, write batches and their
 * entries (tests, metrics).
 */
final class BatchCounts {
    private final LongAdder batches = new LongAdder();
    private final LongAdder requests = new LongAdder();
    private final LongAdder handedOver = new LongAdder();
    private final LongAdder lookups = new LongAdder();
    private final LongAdder reads = new LongAdder();
    private final LongAdder writes = new LongAdder();
    private final LongAdder entries = new LongAdder();

    void batch(int batchRequests) {
        batches.increment();
        requests.add(batchRequests);
    }

    void handedOver() {
        handedOver.increment();
    }

    void lookedUp(int keys) {
        lookups.increment();
        reads.add(keys);
    }

    void wrote(int batchEntries) {
        writes.increment();
        entries.add(batchEntries);
    }

    long batches() {
        return batches.sum();
    }

    long requests() {
        return requests.sum();
    }

    long handedOverBatches() {
        return handedOver.sum();
    }

    long lookups() {
        return lookups.sum();
    }

    long reads() {
        return reads.sum();
    }

    long writes() {
        return writes.sum();
    }

    long entries() {
        return entries.sum();
    }

    /** {multi-gets, reads in them, write batches, entries in them}. */
    long[] snapshot() {
        return new long[] {lookups.sum(), reads.sum(), writes.sum(), entries.sum()};
    }
}
