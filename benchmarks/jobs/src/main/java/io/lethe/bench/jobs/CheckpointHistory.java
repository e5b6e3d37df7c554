package io.lethe.bench.jobs;

import org.apache.flink.runtime.checkpoint.AbstractCheckpointStats;
import org.apache.flink.runtime.checkpoint.CheckpointStatsStatus;
import org.apache.flink.runtime.checkpoint.CompletedCheckpointStats;
import org.apache.flink.runtime.checkpoint.TaskStateStats;
import org.apache.flink.runtime.executiongraph.AccessExecutionGraph;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/** The completed checkpoints of a job, from Flink's checkpoint statistics. */
final class CheckpointHistory {
    private CheckpointHistory() {}

    /**
     * One completed checkpoint (or savepoint).
     *
     * @param ackMillis when its last acknowledgement arrived, in ms since the epoch
     * @param fullBytes all the state it refers to
     * @param checkpointedBytes what it uploaded (for incremental checkpoints the new files only)
     * @param syncMillis the slowest task's synchronous part
     * @param asyncMillis the slowest task's asynchronous part
     * @param durationMillis from its trigger to its last acknowledgement
     * @param externalPath where it can be restored from
     */
    record Entry(long id, long ackMillis, long fullBytes, long checkpointedBytes, long metadataBytes, long syncMillis,
            long asyncMillis, long durationMillis, boolean savepoint, String externalPath) {}

    /** The completed checkpoints and savepoints of {@code graph}, by id. */
    static List<Entry> completed(AccessExecutionGraph graph) {
        List<Entry> completed = new ArrayList<>();
        for (AbstractCheckpointStats c : graph.getCheckpointStatsSnapshot().getHistory().getCheckpoints()) {
            if (c.getStatus() != CheckpointStatsStatus.COMPLETED) {
                continue;
            }
            long sync = 0;
            long async = 0;
            for (TaskStateStats t : c.getAllTaskStateStats()) {
                sync = Math.max(sync, t.getSummaryStats().getSyncCheckpointDurationStats().getMaximum());
                async = Math.max(async, t.getSummaryStats().getAsyncCheckpointDurationStats().getMaximum());
            }
            completed.add(new Entry(c.getCheckpointId(), c.getLatestAckTimestamp(), c.getStateSize(),
                    c.getCheckpointedSize(), c.getMetadataSize(), sync, async, c.getEndToEndDuration(),
                    c.getProperties().isSavepoint(),
                    ((CompletedCheckpointStats) c).getExternalPath()));
        }
        completed.sort(Comparator.comparingLong(Entry::id));
        return completed;
    }
}
