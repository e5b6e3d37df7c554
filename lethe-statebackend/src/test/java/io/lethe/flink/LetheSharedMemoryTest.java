package io.lethe.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lethe.engine.Ticker;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.flink.runtime.memory.MemoryManager;
import org.apache.flink.runtime.operators.testutils.MockEnvironment;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedStateBackendParametersImpl;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;
import org.junit.jupiter.api.Test;

import java.util.Collections;

/**
 * With managed memory, all Lethe engines of a slot share one memory budget reserved from the slot's
 * memory manager: reserved once, counted by every engine, given back with the last engine.
 */
class LetheSharedMemoryTest {
    private static final long MANAGED = 64L << 20;

    @Test
    void theEnginesOfASlotShareOneBudgetReservedFromManagedMemory() throws Exception {
        try (MockEnvironment env = MockEnvironment.builder().setManagedMemorySize(MANAGED).build()) {
            MemoryManager memory = env.getMemoryManager();
            assertEquals(MANAGED, memory.availableMemory());
            LetheStateBackend backend = new LetheStateBackend();
            LetheKeyedStateBackend<Integer> a = create(backend, env, "a");
            LetheKeyedStateBackend<Integer> b = create(backend, env, "b");
            long budget = memory.computeMemorySize(0.5);
            assertEquals(MANAGED - budget, memory.availableMemory(), "the budget is reserved once for the slot");

            fill(a, 'a');
            fill(b, 'b');
            assertEquals('a', read(a, 77).charAt(0));
            assertEquals('b', read(b, 77).charAt(0));
            for (LetheKeyedStateBackend<Integer> backendOnBudget : new LetheKeyedStateBackend[] {a, b}) {
                assertEquals(budget, backendOnBudget.db().statistics().get(Ticker.MEMORY_BUDGET_BYTES));
            }
            // 2 x 30,000 values of 200 bytes against 16 MiB of write buffers: the budget asked for a
            // flush, and once the memtable it switched is written, the write buffers are within it.
            long writeBuffers = settledWriteBuffers(a, budget / 2);
            assertTrue(writeBuffers > 0 && writeBuffers <= budget / 2, "write buffers " + writeBuffers);

            a.dispose();
            assertEquals(MANAGED - budget, memory.availableMemory(), "b still holds the budget");
            b.dispose();
            assertEquals(MANAGED, memory.availableMemory(), "the last engine gives the budget back");
        }
    }

    @Test
    void withoutManagedMemoryNothingIsReserved() throws Exception {
        try (MockEnvironment env = MockEnvironment.builder().setManagedMemorySize(MANAGED).build()) {
            LetheStateBackend backend = new LetheStateBackend().with(LetheOptions.USE_MANAGED_MEMORY, false);
            LetheKeyedStateBackend<Integer> a = create(backend, env, "a");
            fill(a, 'a');
            assertEquals(MANAGED, env.getMemoryManager().availableMemory());
            assertEquals(LetheOptions.PAGE_CACHE_SIZE.defaultValue().getBytes(),
                    a.db().statistics().get(Ticker.MEMORY_BUDGET_BYTES), "its own page cache");
            a.dispose();
        }
    }

    /** The write buffers' bytes once within {@code limit}, or as they are after 10 s of background flushes. */
    private static long settledWriteBuffers(LetheKeyedStateBackend<Integer> backend, long limit)
            throws InterruptedException {
        long deadline = System.nanoTime() + 10_000_000_000L;
        long bytes = backend.db().statistics().get(Ticker.MEMORY_WRITE_BUFFER_BYTES);
        while (bytes > limit && System.nanoTime() < deadline) {
            Thread.sleep(10);
            bytes = backend.db().statistics().get(Ticker.MEMORY_WRITE_BUFFER_BYTES);
        }
        return bytes;
    }

    private static LetheKeyedStateBackend<Integer> create(LetheStateBackend backend, MockEnvironment env,
            String operator) throws Exception {
        return (LetheKeyedStateBackend<Integer>) backend.createKeyedStateBackend(
                new KeyedStateBackendParametersImpl<>(env, new JobID(), operator, IntSerializer.INSTANCE, 128,
                        KeyGroupRange.of(0, 127), env.getTaskKvStateRegistry(), TtlTimeProvider.DEFAULT,
                        new UnregisteredMetricsGroup(), (name, value) -> {}, Collections.emptyList(),
                        new CloseableRegistry(), 0.5));
    }

    private static ValueState<String> state(LetheKeyedStateBackend<Integer> backend) throws Exception {
        return backend.getPartitionedState(VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE,
                new ValueStateDescriptor<>("v", String.class));
    }

    private static void fill(LetheKeyedStateBackend<Integer> backend, char tag) throws Exception {
        ValueState<String> state = state(backend);
        String value = String.valueOf(tag).repeat(200);
        for (int i = 0; i < 30_000; i++) {
            backend.setCurrentKey(i);
            state.update(value + i);
        }
    }

    private static String read(LetheKeyedStateBackend<Integer> backend, int key) throws Exception {
        backend.setCurrentKey(key);
        return state(backend).value();
    }
}
