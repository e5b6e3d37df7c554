package io.lethe.flink.testing;

import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.api.java.tuple.Tuple3;

/**
 * A gate of {@link AllStatesJob} that fails the job once: at the first event after a checkpoint
 * completed that had seen enough events. It throttles like {@link AllStatesJob.Throttle}, so that
 * checkpoints complete mid-input. One job at a time per JVM: {@link #reset} before each.
 */
public final class FailOnceAfterCheckpoint implements AllStatesJob.Gate, CheckpointListener {
    private static final long CHECKPOINTED_AFTER = 3_000;
    private static final long FAIL_AFTER = 6_000;
    private static volatile boolean checkpointed;
    private static volatile boolean failed;
    private static volatile Runnable beforeFailure = () -> {};
    private long seen;

    /** Arms the gate for the next job; {@code beforeFailure} runs right before it fails the job. */
    public static void reset(Runnable beforeFailure) {
        checkpointed = false;
        failed = false;
        FailOnceAfterCheckpoint.beforeFailure = beforeFailure;
    }

    public static boolean failed() {
        return failed;
    }

    @Override
    public Tuple3<Integer, Long, Long> map(Tuple3<Integer, Long, Long> e) throws Exception {
        if (++seen % 10 == 0) {
            Thread.sleep(1);
        }
        if (!failed && checkpointed && seen > FAIL_AFTER) {
            failed = true;
            beforeFailure.run();
            throw new RuntimeException("failing once after a checkpoint");
        }
        return e;
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) {
        if (seen > CHECKPOINTED_AFTER) {
            checkpointed = true;
        }
    }
}
