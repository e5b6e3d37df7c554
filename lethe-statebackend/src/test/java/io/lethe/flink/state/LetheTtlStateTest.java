package io.lethe.flink.state;

import io.lethe.flink.LetheOptions;
import io.lethe.flink.LetheStateBackend;

import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.ttl.StateBackendTestContext;
import org.apache.flink.runtime.state.ttl.TtlStateTestBase;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;

/**
 * Flink's TTL conformance suite (flink-runtime test-jar) against Lethe: Flink's TTL wrappers over
 * Lethe's states, for every state kind, update type and visibility, across snapshots (incremental
 * native checkpoints) and restores.
 *
 * <p>Skipped, for reasons the RocksDB backend shares: incremental cleanup ({@code
 * cleanupIncrementally}) needs {@code getStateIncrementalVisitor}, which an LSM engine does not
 * offer cheaply ({@link #incrementalCleanupSupported()}); cleanup in full snapshots ({@code
 * cleanupFullSnapshot}) filters Flink's canonical full snapshots, while checkpoints here are native
 * engine files, as RocksDB's are ({@link #isSavepoint()}: "full snapshot strategy"). Lethe purges
 * expired state by its horizons instead: with the default delete persistence threshold of one hour
 * they do not move during this suite; {@link LetheTtlStateShortThresholdTest} runs it with moving
 * horizons.
 */
class LetheTtlStateTest extends TtlStateTestBase {
    @Override
    protected StateBackendTestContext createStateBackendTestContext(TtlTimeProvider timeProvider) {
        return new StateBackendTestContext(timeProvider) {
            @Override
            protected StateBackend createStateBackend() {
                return backend();
            }
        };
    }

    /** Small engine buffers, incremental native checkpoints. */
    LetheStateBackend backend() {
        return new LetheStateBackend()
                .with(LetheOptions.USE_MANAGED_MEMORY, false)
                .with(LetheOptions.WRITE_BUFFER_SIZE, MemorySize.parse("1mb"))
                .with(LetheOptions.PAGE_CACHE_SIZE, MemorySize.parse("1mb"))
                .with(CheckpointingOptions.INCREMENTAL_CHECKPOINTS, true);
    }

    @Override
    protected boolean incrementalCleanupSupported() {
        return false;
    }

    @Override
    public boolean isSavepoint() {
        return false;
    }
}
