package io.lethe.flink;

import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.runtime.state.CheckpointStorage;
import org.apache.flink.runtime.state.ConfigurableStateBackend;
import org.apache.flink.runtime.state.StateBackendTestBase;
import org.apache.flink.runtime.state.storage.FileSystemCheckpointStorage;
import org.apache.flink.runtime.state.storage.JobManagerCheckpointStorage;
import org.apache.flink.testutils.junit.extensions.parameterized.Parameter;
import org.apache.flink.testutils.junit.extensions.parameterized.ParameterizedTestExtension;
import org.apache.flink.testutils.junit.extensions.parameterized.Parameters;
import org.apache.flink.util.function.SupplierWithException;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.nio.file.Files;
import java.util.Arrays;
import java.util.List;

/** Flink's own state backend conformance suite (flink-runtime test-jar) against Lethe. */
@ExtendWith(ParameterizedTestExtension.class)
public class LetheStateBackendTest extends StateBackendTestBase<LetheStateBackend> {

    @Parameter(0)
    public boolean incremental;

    @Parameter(1)
    public SupplierWithException<CheckpointStorage, IOException> storageSupplier;

    @Parameters(name = "incremental={0}, storage={1}")
    public static List<Object[]> parameters() {
        SupplierWithException<CheckpointStorage, IOException> jobManager = JobManagerCheckpointStorage::new;
        SupplierWithException<CheckpointStorage, IOException> files = () -> new FileSystemCheckpointStorage(
                Files.createTempDirectory("lethe-checkpoints").toUri(), 0);
        return Arrays.asList(new Object[][] {{false, jobManager}, {false, files}, {true, jobManager}, {true, files}});
    }

    @Override
    protected ConfigurableStateBackend getStateBackend() {
        return smallBackend(incremental);
    }

    /** Small buffers: the suites open many backends; flushes and compactions get exercised. */
    public static LetheStateBackend smallBackend(boolean incremental) {
        return new LetheStateBackend()
                .with(LetheOptions.USE_MANAGED_MEMORY, false)
                .with(LetheOptions.WRITE_BUFFER_SIZE, MemorySize.parse("1mb"))
                .with(LetheOptions.PAGE_CACHE_SIZE, MemorySize.parse("1mb"))
                .with(CheckpointingOptions.INCREMENTAL_CHECKPOINTS, incremental);
    }

    @Override
    protected CheckpointStorage getCheckpointStorage() throws Exception {
        return storageSupplier.get();
    }

    @Override
    protected boolean isSerializerPresenceRequiredOnRestore() {
        return false;
    }

    @Override
    protected boolean supportsAsynchronousSnapshots() {
        return true;
    }

    /** Timers in the engine (the default) keep no key objects, as with RocksDB's timers in RocksDB. */
    @Override
    protected boolean isSafeToReuseKVState() {
        return true;
    }
}
