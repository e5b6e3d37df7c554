package io.lethe.flink.timers;

/**
 * How engine timer queues run.
 *
 * @param cacheSize rows each key group caches on the heap
 * @param countPending whether each queue counts its pending timers exactly (a read of the engine for
 *     each add or remove beyond a key group's cache that the queue cannot decide otherwise, and a read
 *     of every pending timer when the queue opens)
 */
public record TimerQueueSettings(int cacheSize, boolean countPending) {
    public TimerQueueSettings {
        if (cacheSize < 1) {
            throw new IllegalArgumentException("cacheSize must be positive: " + cacheSize);
        }
    }
}
