package io.lethe.bench;

/**
 * When each write of a single-writer run happened, to turn a write's position (RocksDB's sequence
 * number with the WAL off: the n-th put or delete gets sequence number n) into its age. One clock
 * reading per {@value #STRIDE} writes, so an age is off by at most the time those writes took.
 */
final class WriteClock {
    static final int STRIDE = 1024;

    private long[] times = new long[1024];
    private long writes;

    /** Counts one write, made now. */
    void tick() {
        if (writes % STRIDE == 0) {
            int slot = (int) (writes / STRIDE);
            if (slot == times.length) {
                times = java.util.Arrays.copyOf(times, 2 * slot);
            }
            times[slot] = System.nanoTime();
        }
        writes++;
    }

    /** The writes counted so far. */
    long writes() {
        return writes;
    }

    /**
     * The age in microseconds, at {@code nowNanos}, of the write with sequence number {@code seqno}
     * (1 = the first write); sequence number 0 (RocksDB's for entries settled in the last level)
     * counts as the first write.
     */
    long ageMicros(long seqno, long nowNanos) {
        long index = Math.max(0, Math.min(seqno - 1, writes - 1));
        return Math.max(0, (nowNanos - times[(int) (index / STRIDE)]) / 1000);
    }
}
