package io.lethe.bench.jobs;

import io.lethe.engine.Ticker;

import org.HdrHistogram.Histogram;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** What one large-state run measured, as one CSV row, and its timeline and checkpoints as CSV files. */
final class LargeStateResult {
    private static final DateTimeFormatter STARTED = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm", Locale.ROOT)
            .withZone(ZoneOffset.UTC);
    private final Map<String, String> row;
    private final List<CheckpointHistory.Entry> checkpoints;
    private final double startMillis;

    private LargeStateResult(Map<String, String> row, List<CheckpointHistory.Entry> checkpoints, double startMillis) {
        this.row = row;
        this.checkpoints = checkpoints;
        this.startMillis = startMillis;
    }

    /** Writes {@code prefix.csv}, {@code prefix-timeline.csv} and {@code prefix-checkpoints.csv}. */
    void write(Path prefix, List<Timeline.Sample> samples) throws IOException {
        String job = row.get("job");
        String backend = row.get("backend");
        try (PrintWriter csv = new PrintWriter(Files.newBufferedWriter(Path.of(prefix + ".csv")))) {
            csv.println(String.join(",", row.keySet()));
            csv.println(String.join(",", row.values()));
        }
        try (PrintWriter csv = new PrintWriter(Files.newBufferedWriter(Path.of(prefix + "-timeline.csv")))) {
            csv.println("job,backend,seconds,phase,records,records_per_s,rss_bytes,heap_used_bytes,native_bytes,"
                    + "native_resident_bytes,engine_bytes,native_heap_in_use_bytes,native_heap_free_bytes,"
                    + "container_bytes,local_bytes,engine_live_bytes,engine_horizon_advances,engine_page_bytes_dropped,"
                    + "engine_bytes_punched,engine_oldest_held_version_age_ms,engine_obsolete_bytes_held,"
                    + "engine_open_iterators,engine_open_checkpoints,engine_running_compaction_ms,"
                    + "engine_running_compaction_input_bytes,written_bytes,latency_p50_us,latency_p99_us");
            for (Timeline.Sample s : samples) {
                Timeline.EngineExpiry e = s.expiry();
                Timeline.EngineHolds h = s.holds();
                csv.printf(Locale.ROOT, "%s,%s,%.1f,%s,%d,%.0f,%d,%d,%d,%s,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,"
                        + "%d,%d,%s,%s%n", job,
                        backend, s.seconds(), s.phase(), s.records(), s.recordsPerSecond(), s.rssBytes(),
                        s.heapUsedBytes(), s.nativeBytes(),
                        s.nativeResidentBytes() < 0 ? "" : Long.toString(s.nativeResidentBytes()), s.engineBytes(),
                        s.nativeHeapInUseBytes(), s.nativeHeapFreeBytes(), s.containerBytes(), s.localBytes(),
                        e.liveBytes(), e.horizonAdvances(), e.pageBytesDropped(), e.bytesPunched(),
                        h.oldestHeldVersionAgeMs(), h.obsoleteBytesHeld(), h.openIterators(), h.openCheckpoints(),
                        h.runningCompactionMs(), h.runningCompactionInputBytes(), s.writtenBytes(),
                        cell(s.p50Micros()), cell(s.p99Micros()));
            }
        }
        try (PrintWriter csv = new PrintWriter(Files.newBufferedWriter(Path.of(prefix + "-checkpoints.csv")))) {
            csv.println("job,backend,checkpoint,seconds,savepoint,full_bytes,checkpointed_bytes,sync_ms,async_ms");
            for (CheckpointHistory.Entry c : checkpoints) {
                csv.printf(Locale.ROOT, "%s,%s,%d,%.1f,%d,%d,%d,%d,%d%n", job, backend, c.id(),
                        (c.ackMillis() - startMillis) / 1000.0, c.savepoint() ? 1 : 0, c.fullBytes(),
                        c.checkpointedBytes(), c.syncMillis(), c.asyncMillis());
            }
        }
    }

    void print() {
        System.out.printf(Locale.ROOT, "  %s on %s: load %s records/s, steady %s records/s, p99 %s µs, %s bytes"
                        + " written/record, local %s B, restore %s ms (checkpoint) %s ms (savepoint), cold %s records/s,"
                        + " requests per executor batch %s%n",
                row.get("job"), row.get("backend"), row.get("load_records_per_s"), row.get("steady_records_per_s"),
                row.get("latency_p99_us"), row.get("bytes_written_per_record"), row.get("local_bytes_end"),
                row.get("restore_checkpoint_ms"), row.get("restore_savepoint_ms"), row.get("cold_records_per_s"),
                row.get("async_requests_per_batch"));
    }

    /** A mean of {@code micros} over {@code count} in ms; empty when not counted. */
    private static String meanMillis(boolean counted, long micros, long count) {
        return counted && count > 0 ? cell(micros / 1000.0 / count) : "";
    }

    private static String cell(double v) {
        return Double.isNaN(v) ? "" : String.format(Locale.ROOT, "%.1f", v);
    }

    private static double micros(Histogram nanos, double percentile) {
        return nanos.getTotalCount() == 0 ? Double.NaN : nanos.getValueAtPercentile(percentile) / 1000.0;
    }

    private static double median(List<Long> values) {
        if (values.isEmpty()) {
            return Double.NaN;
        }
        List<Long> sorted = new ArrayList<>(values);
        sorted.sort(null);
        int n = sorted.size();
        return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2.0;
    }

    /** Gathers a run's measurements phase by phase. */
    static final class Builder {
        private final Map<String, String> row = new LinkedHashMap<>();
        private final double startMillis = System.currentTimeMillis();
        private LargeStateRun.Stopped stopped;
        private double steadyEndSeconds;
        private double steadyStartSeconds;

        Builder(String job, String backend, LargeStateJobs.Sizes sizes) {
            row.put("job", job);
            row.put("backend", backend);
            row.put("logical_state_bytes", Long.toString(sizes.logicalBytes(job)));
            row.put("managed_memory_bytes", Long.toString(LargeStateBench.managedMemoryBytes()));
            row.put("heap_max_bytes", Long.toString(Runtime.getRuntime().maxMemory()));
        }

        void load(long records, double seconds) {
            row.put("load_records", Long.toString(records));
            row.put("load_seconds", cell(seconds));
            row.put("load_records_per_s", cell(records / seconds));
            steadyStartSeconds = (System.currentTimeMillis() - startMillis) / 1000.0;
        }

        void steady(LargeStateRun.Phase p) {
            steadyEndSeconds = (System.currentTimeMillis() - startMillis) / 1000.0;
            row.put("steady_seconds", cell(p.seconds()));
            row.put("steady_records", Long.toString(p.records()));
            row.put("steady_records_per_s", cell(p.recordsPerSecond()));
            row.put("latency_p50_us", cell(micros(p.latencyNanos(), 50)));
            row.put("latency_p99_us", cell(micros(p.latencyNanos(), 99)));
            row.put("cpu_us_per_record", cell(p.cpuNanos() / 1000.0 / p.records()));
            row.put("bytes_written_per_record", cell((double) p.writtenBytes() / p.records()));
            row.put("lookups", Long.toString(p.lookups()));
            row.put("lookups_missing_state", Long.toString(p.missing()));
            row.put("windows_fired", Long.toString(p.windowsFired()));
            // Lethe's asynchronous executor: how many requests Flink's controller handed it per batch.
            row.put("async_requests_per_batch",
                    p.asyncBatches() == 0 ? "" : cell((double) p.asyncRequests() / p.asyncBatches()));
            // Lethe's checkpoints that linked a flush of the memtables instead of copying them, how long they
            // waited for it, what its flushes wrote, how long they ran and waited for the flush thread, and its
            // heap trims, and how long its compactions paused for flushes someone waited for (in all).
            boolean lethe = row.get("backend").startsWith("lethe");
            BackendGauges.FlushWork f = p.flushWork();
            long checkpointFlushes = f.get(Ticker.CHECKPOINT_FLUSHES);
            long flushes = f.get(Ticker.FLUSHES);
            long trims = f.get(Ticker.HEAP_TRIMS);
            row.put("checkpoint_flushes", lethe ? Long.toString(checkpointFlushes) : "");
            row.put("checkpoint_flush_wait_ms_mean", meanMillis(lethe, f.get(Ticker.CHECKPOINT_FLUSH_WAIT_MICROS),
                    checkpointFlushes));
            row.put("flushes", lethe ? Long.toString(flushes) : "");
            row.put("flush_mb_mean",
                    lethe && flushes > 0 ? cell(f.get(Ticker.BYTES_WRITTEN_FLUSH) / 1e6 / flushes) : "");
            row.put("flush_ms_mean", meanMillis(lethe, f.get(Ticker.FLUSH_MICROS), flushes));
            row.put("flush_delay_ms_mean", meanMillis(lethe, f.get(Ticker.FLUSH_DELAY_MICROS), flushes));
            row.put("heap_trims", lethe ? Long.toString(trims) : "");
            row.put("heap_trim_ms_mean", meanMillis(lethe, f.get(Ticker.HEAP_TRIM_MICROS), trims));
            row.put("compaction_give_way_ms", lethe ? cell(f.get(Ticker.COMPACTION_GIVE_WAY_MICROS) / 1e3) : "");
        }

        /** The job stopped, with these checkpoints and savepoint. */
        void stopped(LargeStateRun.Stopped s) {
            stopped = s;
            List<CheckpointHistory.Entry> steady = s.checkpoints().stream().filter(c -> !c.savepoint())
                    .filter(c -> inSteady(c.ackMillis())).toList();
            row.put("checkpoints", Integer.toString(steady.size()));
            row.put("checkpoint_sync_ms_p50", cell(median(steady.stream().map(c -> c.syncMillis()).toList())));
            row.put("checkpoint_sync_ms_max", Long.toString(steady.stream().mapToLong(c -> c.syncMillis()).max()
                    .orElse(0)));
            row.put("checkpoint_async_ms_p50", cell(median(steady.stream().map(c -> c.asyncMillis()).toList())));
            row.put("checkpoint_async_ms_max", Long.toString(steady.stream().mapToLong(c -> c.asyncMillis()).max()
                    .orElse(0)));
            row.put("checkpointed_bytes_p50", cell(median(steady.stream().map(c -> c.checkpointedBytes()).toList())));
            row.put("checkpoint_full_bytes", Long.toString(s.checkpoints().stream().filter(c -> !c.savepoint())
                    .mapToLong(c -> c.fullBytes()).reduce((a, b) -> b).orElse(0)));
            boolean taken = s.savepoint() != null;
            row.put("savepoint", taken ? "canonical" : LargeStateRun.noCanonicalSavepoint(row.get("job"), row.get("backend")));
            row.put("savepoint_ms", taken ? Long.toString(s.savepointMillis()) : "");
            row.put("savepoint_bytes", taken ? Long.toString(s.checkpoints().stream().filter(c -> c.savepoint())
                    .mapToLong(c -> c.fullBytes()).sum()) : "");
            row.put("restore_savepoint_ms", "");
        }

        private boolean inSteady(long ackMillis) {
            double at = (ackMillis - startMillis) / 1000.0;
            return at >= steadyStartSeconds && at <= steadyEndSeconds;
        }

        /** Why the page cache could not be dropped, or null when it was. */
        void coldCache(String whyNot) {
            row.put("cold_cache", whyNot == null ? "dropped" : whyNot.replace(',', ';'));
        }

        void restored(boolean savepoint, long millis) {
            row.put(savepoint ? "restore_savepoint_ms" : "restore_checkpoint_ms", Long.toString(millis));
        }

        void cold(LargeStateRun.Phase p) {
            row.put("cold_seconds", cell(p.seconds()));
            row.put("cold_records_per_s", cell(p.recordsPerSecond()));
            row.put("cold_latency_p99_us", cell(micros(p.latencyNanos(), 99)));
            row.put("cold_lookups", Long.toString(p.lookups()));
            row.put("cold_lookups_missing_state", Long.toString(p.missing()));
        }

        /** The result; with the memory cgroup the run was limited by, or null when it ran without one. */
        LargeStateResult build(List<Timeline.Sample> samples, MemoryCgroup cgroup) {
            List<Timeline.Sample> steady = samples.stream().filter(s -> s.phase().equals("steady")).toList();
            row.put("local_bytes_end", Long.toString(steady.isEmpty() ? 0 : steady.get(steady.size() - 1).localBytes()));
            row.put("local_bytes_max", Long.toString(steady.stream().mapToLong(Timeline.Sample::localBytes).max()
                    .orElse(0)));
            row.put("local_measure", DiskUsage.MEASURE);
            row.put("rss_max_bytes", Long.toString(samples.stream().mapToLong(Timeline.Sample::rssBytes).max()
                    .orElse(0)));
            row.put("native_max_bytes", Long.toString(samples.stream().mapToLong(Timeline.Sample::nativeBytes).max()
                    .orElse(0)));
            row.put("container_limit_bytes", cgroup == null ? "" : Long.toString(cgroup.limitBytes()));
            row.put("container_max_bytes", cgroup == null ? "" : Long.toString(cgroup.maxUsageBytes()));
            row.put("container_limit_hits", cgroup == null ? "" : Long.toString(cgroup.limitHits()));
            row.put("started_utc", STARTED.format(Instant.ofEpochMilli((long) startMillis)));
            row.put("code", System.getProperty(LargeStateBench.CODE_PROPERTY, "unknown"));
            return new LargeStateResult(row, stopped.checkpoints(), startMillis);
        }
    }
}
