package io.lethe.bench.jobs;

import org.HdrHistogram.Recorder;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the large-state jobs report while they run, read by the benchmark's sampler once a second. A
 * MiniCluster in this JVM runs the jobs, and its user code classes resolve to the application's, so
 * these fields are shared between the operators and the benchmark (Flink's accumulators are only
 * final results). Thread-safe: one writer per field (parallelism 1), any number of readers.
 */
final class LiveMetrics {
    /** Records made by the source: backpressure holds it to the job's pace. */
    static final AtomicLong RECORDS = new AtomicLong();
    /** Latencies in nanoseconds: per record's state accesses (keyed job), per window result (windowed job). */
    static final Recorder LATENCY_NANOS = new Recorder(3);
    /** Keyed job: lookups of keys loaded before, and how many of them did not find their state. */
    static final AtomicLong LOOKUPS = new AtomicLong();
    static final AtomicLong MISSING = new AtomicLong();
    /** Windowed job: windows fired. */
    static final AtomicLong WINDOWS_FIRED = new AtomicLong();
    /** When the stateful operator last opened (after its state was restored), in ms since the epoch. */
    static final AtomicLong OPENED_AT_MILLIS = new AtomicLong();
    /** Windowed job: window end (event time) to when the first record at or past it was made (nanoTime). */
    static final Map<Long, Long> WINDOW_CLOSE_NANOS = new ConcurrentHashMap<>();

    private LiveMetrics() {}
}
