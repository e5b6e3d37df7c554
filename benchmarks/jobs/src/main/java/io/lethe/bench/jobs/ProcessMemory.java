package io.lethe.bench.jobs;

import java.io.IOException;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * This process's memory as the operating system sees it (resident set) and as the JVM accounts for it,
 * so that what a state backend holds outside the JVM can be set against its budget.
 *
 * @param rssBytes resident set size (VmRSS)
 * @param heapUsedBytes live and not yet collected heap
 * @param jvmCommittedBytes heap and non-heap memory the JVM has committed, plus direct and mapped buffers
 * @param heapCommittedBytes the heap's part of that
 * @param heapResidentBytes the heap's resident pages ({@link HeapResidency}); -1 when unknown
 */
public record ProcessMemory(long rssBytes, long heapUsedBytes, long jvmCommittedBytes, long heapCommittedBytes,
        long heapResidentBytes) {
    public static ProcessMemory now() {
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        long buffers = 0;
        for (BufferPoolMXBean pool : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
            buffers += pool.getMemoryUsed();
        }
        long heapCommitted = memory.getHeapMemoryUsage().getCommitted();
        return new ProcessMemory(rss(), memory.getHeapMemoryUsage().getUsed(),
                heapCommitted + memory.getNonHeapMemoryUsage().getCommitted() + buffers, heapCommitted,
                HeapResidency.residentBytes());
    }

    /**
     * What the process holds beyond the JVM's own accounts: the state backend's native memory (caches,
     * write buffers, indexes), the allocator's overhead and thread stacks. At most 0. Undercounts by the
     * committed heap not touched yet ({@link #nativeBytesOfResidentHeap()} does not).
     */
    public long nativeBytes() {
        return Math.max(0, rssBytes - jvmCommittedBytes);
    }

    /**
     * As {@link #nativeBytes()}, with the heap's resident pages in place of its committed size; -1 when
     * those are unknown.
     */
    public long nativeBytesOfResidentHeap() {
        return heapResidentBytes < 0 ? -1
                : Math.max(0, rssBytes - heapResidentBytes - (jvmCommittedBytes - heapCommittedBytes));
    }

    private static long rss() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("VmRSS:")) {
                    return Long.parseLong(line.substring(6).trim().split("\\s+")[0]) * 1024;
                }
            }
        } catch (IOException | NumberFormatException e) {
            // Not Linux: unknown.
        }
        return 0;
    }
}
