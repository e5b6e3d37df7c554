package io.lethe.engine;

import io.lethe.engine.internal.Native;
import io.lethe.engine.internal.NativeLibrary;

/**
 * The C allocator's heaps in this process, as glibc reports them (all zero with another C library).
 * The engine's page cache, open tables and compactions allocate from them, as does the JVM's own
 * native memory; memtables map their memory apart from them. What the allocator keeps free stays
 * resident until a heap trim gives its whole pages back ({@link DbOptions.Builder#heapTrimIntervalMillis});
 * after one, {@code freeBytes} still counts those pages, so it bounds from above what untrimmed frees
 * and fragmentation add to the resident set.
 *
 * @param mappedBytes taken from the operating system: the arenas and the chunks mapped alone
 * @param inUseBytes of that, allocated
 * @param freeBytes of that, kept free for later allocations
 */
public record HeapUsage(long mappedBytes, long inUseBytes, long freeBytes) {
    /**
     * The heaps now; thread-safe. glibc walks each arena's free chunks under that arena's lock, which takes
     * milliseconds on a large, fragmented heap: take it at most about once per second.
     */
    public static HeapUsage now() {
        NativeLibrary.ensureLoaded();
        long[] v = Native.heapUsage();
        return new HeapUsage(v[0], v[1], v[2]);
    }
}
