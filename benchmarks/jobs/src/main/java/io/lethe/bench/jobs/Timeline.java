package io.lethe.bench.jobs;

import org.HdrHistogram.Histogram;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A large-state run over time: once a second the records made so far, the process's memory, the local
 * state's disk usage ({@link DiskUsage}), the bytes written and the latencies of that second, labelled
 * with the run's phase.
 * It also gathers the latencies of the current phase. Thread-safe: a sampler thread of its own writes,
 * the run changes phases and reads.
 */
final class Timeline implements AutoCloseable {
    private static final long PERIOD_MILLIS = 1_000;
    private static final long PRINT_EVERY_SAMPLES = 10;

    /**
     * One sample; {@code seconds} since the run started, latencies of the second before it in µs; {@code
     * nativeResidentBytes} native memory with the heap's resident pages subtracted instead of its committed
     * size (-1: unknown; see {@link ProcessMemory}); {@code engineBytes} what Lethe's memory budget holds (0
     * on other backends); {@code expiry} what Lethe's expiry did to its files (zeros on other backends).
     */
    record Sample(double seconds, String phase, long records, double recordsPerSecond, long rssBytes,
            long heapUsedBytes, long nativeBytes, long nativeResidentBytes, long engineBytes,
            long nativeHeapInUseBytes, long nativeHeapFreeBytes, long containerBytes, long localBytes,
            EngineExpiry expiry, EngineHolds holds, long writtenBytes, double p50Micros, double p99Micros) {}

    /**
     * What Lethe's expiry did to its table files, summed over its engines: the live files' bytes, and so
     * far the horizon moves, the bytes of pages dropped whole and the local storage given back by punching
     * holes for them. Next to the local disk usage they tell expired data not dropped, or dropped but not
     * punched, from live state.
     */
    record EngineExpiry(long liveBytes, long horizonAdvances, long pageBytesDropped, long bytesPunched) {
        static EngineExpiry now() {
            return new EngineExpiry(BackendGauges.sum(BackendGauges.ENGINE, BackendGauges.LIVE_BYTES),
                    BackendGauges.sum(BackendGauges.ENGINE, BackendGauges.HORIZON_ADVANCES),
                    BackendGauges.sum(BackendGauges.ENGINE, BackendGauges.PAGE_BYTES_DROPPED),
                    BackendGauges.sum(BackendGauges.ENGINE, BackendGauges.BYTES_PUNCHED));
        }
    }

    /**
     * What holds old versions of Lethe's file sets and what page drops wait for (zeros on other
     * backends): how long the oldest held version has been held and the longest running compaction has
     * run (the largest over the engines), the bytes of table files no longer current that held versions
     * keep on disk, the iterators and checkpoint copies open and the running compactions' input bytes
     * (summed). A version held for minutes keeps obsolete files, and page drops wait for the compaction
     * running on the same thread: either keeps the pages a horizon expired.
     */
    record EngineHolds(long oldestHeldVersionAgeMs, long obsoleteBytesHeld, long openIterators,
            long openCheckpoints, long runningCompactionMs, long runningCompactionInputBytes) {
        static EngineHolds now() {
            return new EngineHolds(ms(BackendGauges.OLDEST_HELD_VERSION_AGE_US),
                    sum(BackendGauges.OBSOLETE_FILE_BYTES_HELD), sum(BackendGauges.OPEN_ITERATORS),
                    sum(BackendGauges.OPEN_CHECKPOINTS), ms(BackendGauges.RUNNING_COMPACTION_AGE_US),
                    sum(BackendGauges.RUNNING_COMPACTION_INPUT_BYTES));
        }

        private static long ms(String microsGauge) {
            return BackendGauges.max(BackendGauges.ENGINE, microsGauge) / 1000;
        }

        private static long sum(String gauge) {
            return BackendGauges.sum(BackendGauges.ENGINE, gauge);
        }
    }

    private final String what;
    private final Path local;
    private final MemoryCgroup cgroup;
    private final long startNanos = System.nanoTime();
    private final List<Sample> samples = new ArrayList<>();
    private final Thread sampler;
    private String phase = "start";
    private Histogram phaseLatency = new Histogram(3);
    private volatile boolean closed;

    /** Samples {@code local}'s size, and what {@code cgroup} holds unless it is null. */
    Timeline(String what, Path local, MemoryCgroup cgroup) {
        this.what = what;
        this.local = local;
        this.cgroup = cgroup;
        sampler = new Thread(this::run, "timeline");
        sampler.setDaemon(true);
        sampler.start();
    }

    /** Starts a phase: its latencies start empty. */
    synchronized void phase(String name) {
        LiveMetrics.LATENCY_NANOS.getIntervalHistogram();  // drops what belongs to the phase before
        phase = name;
        phaseLatency = new Histogram(3);
    }

    /** The latencies (ns) recorded since the phase started. */
    synchronized Histogram phaseLatency() {
        phaseLatency.add(LiveMetrics.LATENCY_NANOS.getIntervalHistogram());
        return phaseLatency.copy();
    }

    synchronized List<Sample> samples() {
        return List.copyOf(samples);
    }

    double seconds() {
        return (System.nanoTime() - startNanos) / 1e9;
    }

    private void run() {
        long records = LiveMetrics.RECORDS.get();
        double at = seconds();
        while (!closed) {
            try {
                Thread.sleep(PERIOD_MILLIS);
            } catch (InterruptedException e) {
                return;
            }
            long nowRecords = LiveMetrics.RECORDS.get();
            double now = seconds();
            take(now, nowRecords, (nowRecords - records) / (now - at));
            records = nowRecords;
            at = now;
        }
    }

    private void take(double now, long records, double rate) {
        ProcessMemory memory = ProcessMemory.now();
        long localBytes = DiskUsage.of(local);
        long engineBytes = BackendGauges.budgetHeldBytes();
        Sample s;
        synchronized (this) {
            Histogram second = LiveMetrics.LATENCY_NANOS.getIntervalHistogram();
            phaseLatency.add(second);
            boolean none = second.getTotalCount() == 0;
            s = new Sample(now, phase, records, rate, memory.rssBytes(), memory.heapUsedBytes(),
                    memory.nativeBytes(), memory.nativeBytesOfResidentHeap(), engineBytes,
                    BackendGauges.max(BackendGauges.ENGINE, BackendGauges.HEAP_IN_USE),
                    BackendGauges.max(BackendGauges.ENGINE, BackendGauges.HEAP_FREE),
                    cgroup == null ? 0 : cgroup.usageBytes(), localBytes, EngineExpiry.now(), EngineHolds.now(),
                    ExpiryJobBench.bytesWritten(),
                    none ? Double.NaN : second.getValueAtPercentile(50) / 1000.0,
                    none ? Double.NaN : second.getValueAtPercentile(99) / 1000.0);
            samples.add(s);
        }
        if (samples.size() % PRINT_EVERY_SAMPLES == 0) {
            System.out.printf(Locale.ROOT, "    %s %s: %.0f s, %,d records (%,.0f/s), local %s (live files %s,"
                            + " obsolete files held %s for %,d s, compaction running %,d s), RSS %s (heap %s,"
                            + " native %s, Lethe's budget %s, C heap %s in use and %s free), container %s%n", what,
                    s.phase(), now, records, rate, ExpiryJobBench.mib(localBytes),
                    ExpiryJobBench.mib(s.expiry().liveBytes()), ExpiryJobBench.mib(s.holds().obsoleteBytesHeld()),
                    s.holds().oldestHeldVersionAgeMs() / 1000, s.holds().runningCompactionMs() / 1000,
                    ExpiryJobBench.mib(s.rssBytes()),
                    ExpiryJobBench.mib(s.heapUsedBytes()), ExpiryJobBench.mib(s.nativeBytes()),
                    ExpiryJobBench.mib(s.engineBytes()), ExpiryJobBench.mib(s.nativeHeapInUseBytes()),
                    ExpiryJobBench.mib(s.nativeHeapFreeBytes()), ExpiryJobBench.mib(s.containerBytes()));
        }
    }

    @Override
    public void close() throws InterruptedException {
        closed = true;
        sampler.interrupt();
        sampler.join();
    }
}
