package io.lethe.bench.jobs;

import java.util.List;

/**
 * One Nexmark run's measurements.
 *
 * @param seconds the job's whole runtime (Flink's net runtime: from submission to the end, the final
 *     checkpoint included; planning before it is not)
 * @param steadyNanos how long the events from 10 % to 90 % of the input took to enter the job
 * @param samples the local directory's size over time: {ms since submission, bytes}
 * @param checkpoints every completed checkpoint, the final one (after the input ended) last
 * @param result the final result's fingerprint; null if the run failed
 * @param changes the changelog rows the result was folded from
 * @param requestsPerBatch the requests per batch Flink's controller handed Lethe's asynchronous executor;
 *     NaN without it (synchronous state, another backend)
 * @param error why the run failed, or null
 * @param pacedRate the source's events per second in a paced run; 0 unpaced
 * @param latencyP50Micros the median latency of the result rows in a paced run ({@link NexmarkLatency});
 *     NaN without
 * @param latencyP99Micros their 99th percentile; NaN without
 */
record NexmarkRun(String query, String backend, int round, long events, double seconds, long steadyNanos,
        List<long[]> samples, List<JobRun.Checkpoint> checkpoints, NexmarkMultiset.Fingerprint result,
        long changes, double requestsPerBatch, String error, long pacedRate, double latencyP50Micros,
        double latencyP99Micros) implements java.io.Serializable {

    /** An unpaced run. */
    NexmarkRun(String query, String backend, int round, long events, double seconds, long steadyNanos,
            List<long[]> samples, List<JobRun.Checkpoint> checkpoints, NexmarkMultiset.Fingerprint result,
            long changes, double requestsPerBatch, String error) {
        this(query, backend, round, events, seconds, steadyNanos, samples, checkpoints, result, changes,
                requestsPerBatch, error, 0, Double.NaN, Double.NaN);
    }

    static NexmarkRun failed(String query, String backend, int round, long events, long pacedRate, String error) {
        return new NexmarkRun(query, backend, round, events, Double.NaN, 0, List.of(), List.of(), null, 0, Double.NaN,
                error, pacedRate, Double.NaN, Double.NaN);
    }

    double eventsPerSecond() {
        return events / seconds;
    }

    /** Events per second between the 10 % and the 90 % marks; NaN without both. */
    double steadyEventsPerSecond() {
        return steadyNanos <= 0 ? Double.NaN : SteadyProbe.steadyElements(events) / (steadyNanos / 1e9);
    }

    long maxLocal() {
        return samples.stream().mapToLong(s -> s[1]).max().orElse(0);
    }

    /**
     * The largest full size of a completed checkpoint, the final one included: for the queries whose
     * state only grows (regular joins, unbounded aggregations, top-N) the final one is the largest.
     */
    long maxCheckpoint() {
        return checkpoints.stream().mapToLong(JobRun.Checkpoint::fullBytes).max().orElse(0);
    }

    /** The final checkpoint's full size, taken when the input had ended; -1 without checkpoints. */
    long finalCheckpoint() {
        return checkpoints.isEmpty() ? -1 : checkpoints.get(checkpoints.size() - 1).fullBytes();
    }
}
