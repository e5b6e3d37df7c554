package io.lethe.bench.jobs;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertTrue;

class ProcessMemoryTest {
    private static final int MIB = 1 << 20;

    @Test
    void theHeapsResidentPagesAreFoundAndTouchingTheHeapAddsToThem() {
        ProcessMemory before = ProcessMemory.now();
        assertTrue(before.heapResidentBytes() > 0, "the heap's range and pages: " + before);
        byte[][] touched = new byte[64][];
        for (int i = 0; i < touched.length; i++) {
            touched[i] = new byte[MIB];
            java.util.Arrays.fill(touched[i], (byte) i);
        }
        ProcessMemory after = ProcessMemory.now();
        assertTrue(after.heapResidentBytes() <= after.heapCommittedBytes() + 4 * MIB,
                "no more resident than committed: " + after);
        assertTrue(after.heapResidentBytes() >= 64L * MIB, "64 MiB written into the heap: " + after);
        assertTrue(after.nativeBytesOfResidentHeap() >= after.nativeBytes(),
                "the committed heap not touched is native memory's undercount: " + after);
        assertTrue(touched[63][MIB - 1] == 63);
    }
}
