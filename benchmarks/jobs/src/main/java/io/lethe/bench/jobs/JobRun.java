package io.lethe.bench.jobs;

import org.HdrHistogram.Histogram;

import java.util.List;

/**
 * One run's measurements.
 *
 * @param rate records per second of a paced run, 0 for a run as fast as the job goes
 * @param seconds the job's whole runtime, startup and final checkpoint included
 * @param steadyNanos how long the records from 10 % to 90 % of the input took to enter the job
 * @param cpuNanos CPU time of the whole process during the job
 * @param latency result latencies in µs (paced runs), or null
 * @param samples the local directory's size over time: {ms since submission, bytes}
 * @param fireMillis from the first window fired to the last; the timers job's watermark step
 */
record JobRun(String job, String backend, int round, long records, long rate, double seconds, long steadyNanos,
        long cpuNanos, long bytesWritten, Histogram latency, List<long[]> samples,
        List<JobRun.Checkpoint> checkpoints, double fireMillis) {

    /** One completed checkpoint, from Flink's checkpoint statistics. */
    record Checkpoint(long id, long ms /* since the job was submitted, at its last acknowledgement */,
            long fullBytes, long checkpointedBytes, long metadataBytes, long syncMillis, long asyncMillis,
            long durationMillis) implements java.io.Serializable {}

    boolean paced() {
        return rate > 0;
    }

    /** Records per second over the whole job. */
    double recordsPerSecond() {
        return records / seconds;
    }

    /** Records per second between 10 % and 90 % of the input; NaN for paced runs or without both marks. */
    double steadyRecordsPerSecond() {
        return paced() || steadyNanos <= 0 ? Double.NaN
                : SteadyProbe.steadyElements(records) / (steadyNanos / 1e9);
    }

    double cpuMicrosPerRecord() {
        return cpuNanos / 1000.0 / records;
    }

    /** A latency percentile in µs; NaN without latencies. */
    double latencyMicros(double percentile) {
        return latency == null || latency.getTotalCount() == 0 ? Double.NaN
                : latency.getValueAtPercentile(percentile);
    }

    double bytesPerRecord() {
        return (double) bytesWritten / records;
    }

    /** What the checkpoints uploaded (incremental: new files only) plus their metadata files. */
    long checkpointBytesWritten() {
        return checkpoints.stream().mapToLong(c -> c.checkpointedBytes() + c.metadataBytes()).sum();
    }

    /** Without the checkpoint files (the state backend's own writes: flushes, compactions, ...). */
    double stateBytesPerRecord() {
        return (double) Math.max(0, bytesWritten - checkpointBytesWritten()) / records;
    }

    long maxLocal() {
        return samples.stream().mapToLong(s -> s[1]).max().orElse(0);
    }

    /** Local size at the end of the run, from the samples. */
    long localAtEnd() {
        return samples.isEmpty() ? 0 : samples.get(samples.size() - 1)[1];
    }

    /**
     * The checkpoints taken while the input was read: all but the last. A bounded job with
     * checkpoints finishes only after a final checkpoint, taken when its input has ended and the last
     * windows have fired (the benchmark's runs confirm it: the last completes at the job's end).
     */
    List<Checkpoint> duringRun() {
        return checkpoints.isEmpty() ? List.of() : checkpoints.subList(0, checkpoints.size() - 1);
    }

    /** The largest full size of a checkpoint while the input was read; 0 without one. */
    long maxCheckpoint() {
        return duringRun().stream().mapToLong(Checkpoint::fullBytes).max().orElse(0);
    }

    /** The longest checkpoint (trigger to last acknowledgement) while the input was read; NaN without one. */
    double maxCheckpointMillis() {
        return duringRun().isEmpty() ? Double.NaN
                : duringRun().stream().mapToLong(Checkpoint::durationMillis).max().getAsLong();
    }

    /** The full size of the final checkpoint (what is left once the input ended); -1 without one. */
    long finalCheckpoint() {
        return checkpoints.isEmpty() ? -1 : checkpoints.get(checkpoints.size() - 1).fullBytes();
    }
}
