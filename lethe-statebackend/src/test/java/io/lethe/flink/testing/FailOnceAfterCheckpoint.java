package io.lethe.flink.testing;

import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.api.java.tuple.Tuple3;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;

import java.util.HashMap;
import java.util.Map;
import java.util.function.BooleanSupplier;

/**
 * A gate of {@link AllStatesJob} that fails the job once: at the first event after a checkpoint
 * completed whose barrier passed the gate after enough events (so the checkpoint holds their state;
 * a checkpoint taken before them and completed after would hold none). It throttles like {@link
 * AllStatesJob.Throttle}, so that checkpoints complete mid-input. One job at a time per JVM:
 * {@link #reset} before each.
 */
public final class FailOnceAfterCheckpoint implements AllStatesJob.Gate, CheckpointListener, CheckpointedFunction {
    private static final long CHECKPOINTED_AFTER = 3_000;
    private static final long FAIL_AFTER = 6_000;
    private static volatile boolean checkpointed;
    private static volatile boolean failed;
    private static volatile BooleanSupplier beforeFailure = () -> true;
    private long seen;
    /** Events seen when each checkpoint's barrier passed, until the checkpoint completes. */
    private final Map<Long, Long> seenAtBarrier = new HashMap<>();

    /**
     * Arms the gate for the next job. {@code beforeFailure} runs right before the gate fails the job,
     * and says whether it may: when it answers false, the gate tries again at the next event.
     */
    public static void reset(BooleanSupplier beforeFailure) {
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
        if (!failed && checkpointed && seen > FAIL_AFTER && beforeFailure.getAsBoolean()) {
            failed = true;
            throw new RuntimeException("failing once after a checkpoint");
        }
        return e;
    }

    @Override
    public void snapshotState(FunctionSnapshotContext context) {
        seenAtBarrier.put(context.getCheckpointId(), seen);
    }

    @Override
    public void initializeState(FunctionInitializationContext context) {}

    @Override
    public void notifyCheckpointComplete(long checkpointId) {
        Long atBarrier = seenAtBarrier.remove(checkpointId);
        if (atBarrier != null && atBarrier > CHECKPOINTED_AFTER) {
            checkpointed = true;
        }
    }
}
