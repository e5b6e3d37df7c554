package io.lethe.flink.async;

import io.lethe.flink.LetheOptions;
import io.lethe.flink.LetheStateBackend;
import io.lethe.flink.LetheStateBackendTest;

import org.apache.flink.api.common.JobID;
import org.apache.flink.runtime.state.CheckpointStorage;
import org.apache.flink.runtime.state.ConfigurableStateBackend;
import org.apache.flink.runtime.state.storage.FileSystemCheckpointStorage;
import org.apache.flink.runtime.state.storage.JobManagerCheckpointStorage;
import org.apache.flink.runtime.state.v2.StateBackendTestV2Base;
import org.apache.flink.testutils.junit.extensions.parameterized.Parameter;
import org.apache.flink.testutils.junit.extensions.parameterized.ParameterizedTestExtension;
import org.apache.flink.testutils.junit.extensions.parameterized.Parameters;
import org.apache.flink.util.IOUtils;
import org.junit.jupiter.api.extension.ExtendWith;

import java.nio.file.Files;
import java.util.Arrays;
import java.util.List;

/**
 * Flink's own suite for asynchronous keyed state backends (flink-runtime test-jar) against
 * Lethe: snapshot and restore, rescaling up and down, timer queues, state TTL. The suite's mailbox
 * runs callbacks at once on the thread that completes a request, and Flink's execution controller,
 * which the callbacks drive, is made for one thread. With the request pipeline's thread completing
 * requests, the controller would be used from the test's thread and that one at once, and can lose
 * a request (a test then waits forever). So the suite runs with the task thread serving each batch
 * ({@code async-state.inline-batch-size}, set here though it is the default); what it checks does
 * not depend on which thread serves. The pipeline's thread is tested with callbacks run on the
 * test's thread, as a task runs them ({@link BatchedRequestsTest}, {@link RequestPipelineTest}),
 * and in jobs.
 */
@ExtendWith(ParameterizedTestExtension.class)
public class LetheAsyncStateBackendTest extends StateBackendTestV2Base<LetheStateBackend> {

    @Parameter(0)
    public boolean incremental;

    @Parameter(1)
    public boolean fileStorage;

    /** Whether a restore is a new job (as from a savepoint) rather than the same job failing over. */
    @Parameter(2)
    public boolean newJob;

    @Parameters(name = "incremental={0}, file storage={1}, new job={2}")
    public static List<Object[]> parameters() {
        return Arrays.asList(new Object[][] {{false, false, false}, {true, true, true}});
    }

    @Override
    protected ConfigurableStateBackend getStateBackend() {
        return LetheStateBackendTest.smallBackend(incremental).with(LetheOptions.ASYNC_STATE_EXECUTOR, true)
                .with(LetheOptions.ASYNC_STATE_INLINE_BATCH_SIZE, Integer.MAX_VALUE);
    }

    @Override
    protected CheckpointStorage getCheckpointStorage() throws Exception {
        return fileStorage
                ? new FileSystemCheckpointStorage(Files.createTempDirectory("lethe-async-checkpoints").toUri(), 0)
                : new JobManagerCheckpointStorage();
    }

    @Override
    protected void restoreJob() throws Exception {
        if (newJob) {
            IOUtils.closeQuietly(env);
            jobID = new JobID();
            env = buildMockEnv();
        }
    }
}
