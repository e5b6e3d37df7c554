package io.lethe.bench.jobs;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/** Writes the job benchmark's CSV files and the settings the report lists. */
final class JobResults {
    private JobResults() {}

    static void write(List<JobRun> runs, Path out, ExpiryJobBench.Sizes sizes) throws IOException {
        writeRuns(runs, out.resolve("jobs.csv"));
        try (PrintWriter csv = new PrintWriter(Files.newBufferedWriter(out.resolve("jobs-state-size.csv")))) {
            csv.println("job,backend,round,ms,local_bytes");
            for (JobRun r : runs) {
                for (long[] s : r.samples()) {
                    csv.printf("%s,%s,%d,%d,%d%n", r.job(), r.backend(), r.round(), s[0], s[1]);
                }
            }
        }
        try (PrintWriter csv = new PrintWriter(Files.newBufferedWriter(out.resolve("jobs-checkpoints.csv")))) {
            csv.println("job,backend,round,checkpoint,ms,full_bytes,checkpointed_bytes,metadata_bytes,sync_ms,"
                    + "async_ms,duration_ms,final");
            for (JobRun r : runs) {
                for (JobRun.Checkpoint c : r.checkpoints()) {
                    csv.printf("%s,%s,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d%n", r.job(), r.backend(), r.round(), c.id(), c.ms(),
                            c.fullBytes(), c.checkpointedBytes(), c.metadataBytes(), c.syncMillis(), c.asyncMillis(),
                            c.durationMillis(),
                            c == r.checkpoints().get(r.checkpoints().size() - 1) ? 1 : 0);
                }
            }
        }
        writeSettings(out.resolve("jobs.settings.csv"), sizes);
        System.out.println("wrote " + out.resolve("jobs.csv") + ", " + out.resolve("jobs-state-size.csv") + " and "
                + out.resolve("jobs-checkpoints.csv"));
    }

    private static String cell(double v, String format) {
        return Double.isNaN(v) ? "" : String.format(Locale.ROOT, format, v);
    }

    private static void writeRuns(List<JobRun> runs, Path file) throws IOException {
        try (PrintWriter csv = new PrintWriter(Files.newBufferedWriter(file))) {
            csv.println("job,backend,round,records,rate,seconds,records_per_s,steady_records_per_s,cpu_us_per_record,"
                    + "latency_p50_us,latency_p99_us,bytes_written_per_record,state_bytes_written_per_record,"
                    + "local_max_bytes,local_end_bytes,checkpoints,max_checkpoint_bytes,final_checkpoint_bytes,"
                    + "checkpointed_bytes_per_record,max_checkpoint_ms,fire_ms");
            for (JobRun r : runs) {
                boolean none = r.duringRun().isEmpty();
                csv.printf(Locale.ROOT, "%s,%s,%d,%d,%d,%.3f,%.0f,%s,%.2f,%s,%s,%.2f,%.2f,%d,%d,%d,%s,%s,%.2f,%s,%s%n",
                        r.job(), r.backend(), r.round(), r.records(), r.rate(), r.seconds(), r.recordsPerSecond(),
                        cell(r.steadyRecordsPerSecond(), "%.0f"), r.cpuMicrosPerRecord(),
                        cell(r.latencyMicros(50), "%.0f"), cell(r.latencyMicros(99), "%.0f"), r.bytesPerRecord(),
                        r.stateBytesPerRecord(), r.maxLocal(), r.localAtEnd(), r.duringRun().size(),
                        none ? "" : Long.toString(r.maxCheckpoint()),
                        r.finalCheckpoint() < 0 ? "" : Long.toString(r.finalCheckpoint()),
                        (double) r.checkpointBytesWritten() / r.records(), cell(r.maxCheckpointMillis(), "%.0f"),
                        cell(r.fireMillis(), "%.1f"));
            }
        }
    }

    private static void writeSettings(Path file, ExpiryJobBench.Sizes sizes) throws IOException {
        try (PrintWriter csv = new PrintWriter(Files.newBufferedWriter(file))) {
            csv.println("key,value");
            csv.printf(Locale.ROOT, "what,Flink jobs on a MiniCluster (parallelism 1; %s managed memory for every"
                    + " backend); one per run; in this JVM%n", ExpiryJobBench.MANAGED_MEMORY);
            csv.printf(Locale.ROOT, "records,%,d per unpaced run (tumbling; sliding); paced runs (tumbling-paced; ttl)"
                    + " %,d records/s for %d s%n", sizes.records(), sizes.rate(), sizes.pacedSeconds());
            csv.printf("tumbling,%,d keys; event time advancing 1 ms per %d records; tumbling %d s windows holding"
                    + " every element (list state); counted when they fire; as fast as the job goes%n",
                    Jobs.WINDOW_KEYS, Jobs.RECORDS_PER_MS, ExpiryJobBench.WINDOW.toSeconds());
            csv.printf("sliding,as tumbling but windows of %d s sliding by %d s (each element in two windows)%n",
                    ExpiryJobBench.WINDOW.toSeconds(), ExpiryJobBench.SLIDE.toSeconds());
            csv.printf("tumbling-paced,as tumbling at the paced rate; latency = a window result's time - the due"
                    + " time of the first record past the window's end (when it could close); HdrHistogram%n");
            csv.printf("paced runs,network buffer timeout %d ms and watermarks every %d ms (Flink's defaults: 100 and"
                    + " 200 ms) for every backend%n", ExpiryJobBench.PACED_BUFFER_TIMEOUT.toMillis(),
                    ExpiryJobBench.PACED_WATERMARK_INTERVAL.toMillis());
            csv.printf(Locale.ROOT, "timers,%,d keys with one event each; all in one tumbling window of %d h per key"
                    + " holding its elements; as fast as the job goes; the windows fire in one watermark step when the"
                    + " input ends; watermark step = first window fired to last (each fire: timer poll; window read;"
                    + " clear)%n", sizes.timers(), Jobs.TIMERS_WINDOW.toHours());
            csv.printf("ttl,de-duplication at the paced rate: every key seen about four times spread over the input;"
                    + " a value state per key with a %d s processing-time TTL and Flink's default cleanup (RocksDB and"
                    + " ForSt: compaction filter; HashMap: incremental cleanup; Lethe: the horizon); latency = the"
                    + " record's processing time - its due time%n", Jobs.TTL.toSeconds());
            for (String[] b : JobBackends.SETTINGS) {
                if (sizes.backends().contains(b[0])) {
                    csv.printf("backend %s,%s%n", b[0], b[1]);
                }
            }
            csv.printf("checkpoints,every %d s; incremental (full for HashMap)%n",
                    ExpiryJobBench.checkpointInterval.toSeconds());
            csv.println("records/s,steady state: the records from 10 % to 90 % of the input over the time they took"
                    + " to enter the job (startup and the final checkpoint excluded); unpaced runs only");
            csv.println("CPU/record,CPU time of the whole process (all threads: job; backend; MiniCluster) per record");
            csv.println("bytes written,what the process wrote to disk (/proc/self/io) per record; without checkpoint"
                    + " files: minus what the checkpoints uploaded and their metadata (the HashMap row shows the"
                    + " MiniCluster's own writes)");
            csv.println("local state,the backend's local directory sampled every 250 ms");
            csv.println("checkpoint size,from Flink's checkpoint statistics: the full size of each completed checkpoint"
                    + " (all the state it refers to) and its checkpointed size (what it uploaded: for incremental"
                    + " checkpoints the new files only); the largest while the input was read (empty when a run"
                    + " ended before its first checkpoint) and the final one; which Flink takes after the input ended"
                    + " and the last windows fired; sync and async durations of the slowest task");
            csv.println("checkpoint duration,from a checkpoint's trigger to its last acknowledgement (Flink's end-to-end"
                    + " duration); the longest while the input was read");
            csv.printf("verdicts,Lethe against the best on-disk peer (%s) per metric and round%n",
                    String.join("; ", JobBackends.PEERS));
            csv.printf("rounds,%d; backends interleaved (order rotated each round)%n", sizes.rounds());
            if (sizes.warmUpRecords() > 0) {
                csv.printf(Locale.ROOT, "warm-up,before the first round every backend ran the tumbling job once with"
                        + " %,d records; not recorded (the first run in a JVM pays for compiling Flink's code)%n",
                        sizes.warmUpRecords());
            }
        }
    }
}
