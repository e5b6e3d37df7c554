package io.lethe.bench.suite;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The report on small synthetic results: every section, chart and raw-data link is there, the
 * charts open, ratios are taken per round, the hand-written block survives regeneration and
 * missing parts say "not run".
 */
class ReportTest {
    static final List<String> CHARTS = List.of("summary.png", "engine-ops.png", "ycsb-space-amp.png", "ycsb-write-amp.png",
            "ycsb-lookups.png", "ycsb-compactions.png", "ycsb-tombstone-age-cdf-2.png",
            "ycsb-tombstone-age-cdf-10.png", "secondary-bytes-by-h-uncorrelated.png",
            "secondary-bytes-by-h-correlated.png", "secondary-pages-dropped.png", "secondary-lookup-by-h.png",
            "jobs-tumbling-state-size.png", "jobs-tumbling-checkpoint-size.png", "jobs-ttl-state-size.png",
            "jobs-ttl-checkpoint-size.png", "jobs-throughput.png",
            "jobs-latency-p99.png", "jobs-bytes-per-record.png", "largestate-keyed-throughput.png",
            "largestate-keyed-p99.png", "largestate-keyed-local.png", "largestate-keyed-rss.png",
            "largestate-keyed-container.png", "largestate-windowed-throughput.png", "largestate-windowed-p99.png",
            "largestate-windowed-local.png", "largestate-windowed-rss.png", "largestate-windowed-container.png",
            "nexmark-throughput.png", "nexmark-state-size.png", "nexmark-async-throughput.png", "streams-disk.png", "streams-expired.png");
    static final List<String> SECTIONS = List.of("# Benchmarks",
            "## Summary: where Lethe is ahead and where it is behind", "## Machine, versions and settings",
            "## Engine operations (JMH)", "## Delete-heavy YCSB-A", "## Secondary range deletes", "## Flink jobs",
            "## State far larger than memory", "## Nexmark", "## Nexmark with asynchronous state", "## Kafka Streams");

    @BeforeAll
    static void headless() {
        System.setProperty("java.awt.headless", "true");
    }

    @Test
    void fullReportLinksChartsThatOpen(@TempDir Path tmp) throws Exception {
        Path report = tmp.resolve("docs/benchmarks.md");
        String md = reportOnSyntheticResults(tmp.resolve("docs/benchmarks"), report);
        SECTIONS.forEach(s -> assertTrue(md.contains(s), "section " + s));
        assertFalse(md.contains("not run"), md);
        for (String chart : CHARTS) {
            assertTrue(md.contains("](benchmarks/" + chart + ")"), "link to " + chart);
        }
        Matcher m = Pattern.compile("!\\[[^\\]]*\\]\\(([^)]+)\\)").matcher(md);
        int images = 0;
        while (m.find()) {
            BufferedImage image = ImageIO.read(report.getParent().resolve(m.group(1)).toFile());
            assertNotNull(image, m.group(1));
            assertEquals(Charts.WIDTH, image.getWidth(), m.group(1));
            images++;
        }
        assertEquals(CHARTS.size(), images);
        for (String csv : List.of("engine-ops.csv", "ycsb.csv", "ycsb-tombstone-ages.csv", "secondary-deletes.csv",
                "jobs.csv", "jobs-state-size.csv", "jobs-checkpoints.csv", "jobs.settings.csv")) {
            assertTrue(md.contains("[" + csv + "](benchmarks/" + csv + ")"), "link to " + csv);
        }
        assertTrue(md.contains("| cpu | Test CPU, 2 cores |"), "environment value after the first comma");
        assertTrue(md.contains("Produced by `benchmarks/run.sh full`"));
    }

    @Test
    void ratiosAreTakenPerRound(@TempDir Path tmp) throws Exception {
        String md = reportOnSyntheticResults(tmp.resolve("data"), tmp.resolve("report.md"));
        // put: Lethe / RocksDB is 2.0 in round 1 and 4.0 in round 2; the ratio of the medians would be 3.5.
        assertTrue(md.contains("| Engine `put` ops/s | 3.00 (2.00-4.00) | higher | ahead |"), md);
        assertTrue(md.contains("| `put` | 700 (200-1,200) | 200 (100-300) | 3.00 (2.00-4.00) | ahead |"), md);
        // getMiss x2: 2.0 and 2.2 times RocksDB, but in one of the two rounds the confidence intervals
        // overlap (100 apart, 110 wide); put's never do.
        assertTrue(md.contains("| Engine `getMiss x2` ops/s | 2.10 (2.00-2.20) | higher | even (within noise) |"), md);
        assertFalse(md.contains("3.50"));
        assertTrue(md.contains("| Engine `getHit` ops/s | 1.00 (0.99-1.01) | higher | even (within noise) |"), md);
        // MultiGet against the same engine's single gets, the helper thread apart and only there.
        assertTrue(md.contains("| Engine multiGet100 keys/s vs Lethe's own getHit, Lethe, on the calling thread"
                + " (goal 2.0x) | 1.50 (all 1.50) | higher | below the goal |"), md);
        assertTrue(md.contains("| Engine multiGet100 keys/s vs Lethe's own getHit, Lethe, with 1 helper thread"
                + " (a second core) (goal 2.0x) | 2.10 (all 2.10) | higher | goal met |"), md);
        assertTrue(md.contains("| RocksDB (multiGetAsList) | 1,200 | 1,000 | 1.20 (all 1.20)"
                + " | below the goal |"), md);
        assertFalse(md.contains("`multiGet100 / 1 helper thread`"), md);
        // YCSB: each metric against the best RocksDB variant of the round, not plain RocksDB.
        assertTrue(md.contains("| 2 % | write amplification | lower | rocksdb-ttl | 2.00 (all 2.00) | behind |"), md);
        assertTrue(md.contains("| 10 % | space amplification | lower | rocksdb | 0.81 (all 0.81) | ahead |"), md);
        // Freed on disk: 1 % of 100 MiB deleted; Lethe frees half of it, the scan all.
        assertTrue(md.contains("| 1 % | lethe (h = 8) | 0.500 | 50 % |"), md);
        assertTrue(md.contains("| 1 % | rocksdb-scan | 1 | 100 % |"), md);
        // jobs: Lethe writes half RocksDB's bytes per record in every round.
        assertTrue(md.contains("| Job `tumbling`: bytes written per record (vs best on-disk peer) | 0.50 (all 0.50)"
                + " | lower | ahead |"), md);
        // Steady records/s against the best peer (ForSt), not the weaker RocksDB; latency against RocksDB.
        assertTrue(md.contains("| records/s | higher | forst | 0.80 (all 0.80) | behind |"), md);
        assertTrue(md.contains("| latency p99 | lower | rocksdb | 0.50 (all 0.50) | ahead |"), md);
        // Window jobs also against each RocksDB configuration alone: 100 k / 90 k records/s.
        assertTrue(md.contains("| records/s | higher | 1.11 (all 1.11) | ahead |"), md);
        // secondary deletes: RocksDB's scan takes 100 and 400 ms in rounds 1 and 2, Lethe at h = 4 9 and 18 ms:
        // speed-ups 11.1 and 22.2, median 16.7 (the ratio of the medians would be 18.5).
        assertTrue(md.contains("| 0.1 % | 4 | 13.5 (9-18) | 0.0334 | 0 | 3 |"), md);
        assertTrue(md.contains("| 191 (scan) | 0.0175 % | 250 (100-400) (scan) | 16.7 (11.1-22.2) |"), md);
        assertTrue(md.contains("Secondary range deletes, uncorrelated, h = 8: bytes read+written vs best RocksDB"
                + " (over selectivities and rounds)"), md);
        assertTrue(md.contains("| hashmap | "), md);
        assertTrue(md.contains("| heap | heap |"), "hashmap's local state is on the heap");
        // ttl: no HashMap run completed a checkpoint (empty cells), which must not read as 0 bytes.
        String ttl = md.substring(md.indexOf("### ttl"));
        assertTrue(ttl.contains("| heap | heap | 0 | - | - | - |"), ttl);
        // Large state: against ForSt, the best peer, not RocksDB; ForSt's savepoint cells say why they are empty.
        assertTrue(md.contains("| records/s, steady | higher | forst | 0.80 (1 run) | behind |"), md);
        assertTrue(md.contains("| refused by the backend | refused by the backend | 700 | refused by the backend |"),
                md);
        assertTrue(md.contains("| restore from the canonical savepoint | lower | rocksdb | 1.10 (1 run) | behind |"),
                md);
        // Nexmark: against RocksDB (the fastest peer), and every result equal to the HashMap backend's.
        assertTrue(md.contains("| q4 | rocksdb | 0.90 (1 round) | behind |"), md);
        assertTrue(md.contains("| q5 | lethe | 90 | 1 | 1 | 10 | yes |"), md);
        // Nexmark with asynchronous state: against ForSt's executor and RocksDB's synchronous state, each on its own.
        assertTrue(md.contains("| q20 | 3.00 (1 round) | ahead | 0.90 (1 round) | behind | 0.50 (1 round) | ahead |"),
                md);
        assertTrue(md.contains("| q20 | lethe | asynchronous, its executor | 90 | 1 | 1 | 4.50 | yes |"), md);
        assertTrue(md.contains("| q20 | rocksdb | synchronous | 100 | 1 | 2 | - | reference |"), md);
        assertTrue(md.contains("| Nexmark async q20: events/s (vs ForSt's executor) | 3.00 (1 round) | higher | ahead |"),
                md);
        // Lethe through Flink's synchronous adaptor, its default, is judged on its own, against the same peers.
        assertTrue(md.contains("| q20 | lethe-adaptor | asynchronous, Flink's synchronous adaptor | 120 | 1 | 1 | - |"
                + " yes |"), md);
        assertTrue(md.contains("| q20 | 4.00 (1 round) | ahead | 1.20 (1 round) | ahead | 0.50 (1 round) | ahead |"),
                md);
        assertTrue(md.contains("| Nexmark async q20 through Flink's synchronous adaptor (Lethe's default): events/s (vs"
                + " RocksDB, synchronous state) | 1.20 (1 round) | higher | ahead |"), md);
        assertTrue(md.contains("| Nexmark async q20 through Flink's synchronous adaptor (Lethe's default): latency p99"
                + " (vs RocksDB, synchronous state) | 0.80 (1 round) | lower | ahead |"), md);
        // The paced runs: their latency, apart from the unpaced runs' events/s.
        assertTrue(md.contains("| q20 | lethe | 4,000 | 100 | 200 | 2.50 | yes |"), md);
        assertTrue(md.contains("| q20 | 0.20 (1 round) | ahead | 4.00 (1 round) | behind |"), md);
    }

    @Test
    void handWrittenBlockIsKept(@TempDir Path tmp) throws Exception {
        Path data = tmp.resolve("data");
        writeAll(data);
        Path report = tmp.resolve("report.md");
        Report.write(data, report);
        assertTrue(Files.readString(report).contains(Report.HAND_START + "\n" + Report.HAND_PLACEHOLDER + "\n"
                + Report.HAND_END));
        String block = Report.HAND_START + "\nLethe is ahead on *space*.\n\n| a | b |\n" + Report.HAND_END;
        Files.writeString(report, "# Old report\n\nold text\n" + block + "\nmore old text\n");
        Report.write(data, report);
        String md = Files.readString(report);
        assertTrue(md.contains(block), md);
        assertFalse(md.contains("old text"));
        assertTrue(md.indexOf("## Summary") < md.indexOf(block));
        assertTrue(md.indexOf(block) < md.indexOf("## Machine, versions and settings"));
    }

    /** Large state: local state measured one way is never judged against local state measured another. */
    @Test
    void localStateMeasuredDifferentlyIsNotCompared(@TempDir Path tmp) throws Exception {
        String md = reportWithLargeState(tmp, List.of("job,backend,steady_records_per_s,local_bytes_end,local_measure",
                "keyed,lethe,100,1048576,disk blocks in use", "keyed,forst,80,4194304,",
                "windowed,lethe,100,1048576,disk blocks in use", "windowed,forst,80,4194304,disk blocks in use"));
        String keyed = md.substring(md.indexOf("### keyed"), md.indexOf("### windowed"));
        assertFalse(keyed.contains("| local state at the end |"), keyed);
        assertTrue(keyed.contains("Local state is not compared: forst: file sizes summed; lethe: disk blocks in use."),
                keyed);
        assertTrue(keyed.contains("| 1 (disk blocks in use) |"), keyed);
        // Measured alike: judged (1 MiB against 4 MiB, lower is better).
        String windowed = md.substring(md.indexOf("### windowed"));
        assertTrue(windowed.contains("| local state at the end | lower | forst | 0.25 (1 run) | ahead |"), windowed);
        assertFalse(windowed.contains("Local state is not compared"), windowed);
    }

    /**
     * Large state: how many of Lethe's steady checkpoints linked a flush instead of copying the memtables
     * is shown next to its checkpoints; a peer, or a run from before the count, shows none.
     */
    @Test
    void theCheckpointsThatLinkedAFlushAreShownForLethe(@TempDir Path tmp) throws Exception {
        String md = reportWithLargeState(tmp, List.of("job,backend,steady_records_per_s,checkpoints,checkpoint_flushes",
                "keyed,lethe,100,20,7", "keyed,forst,80,21,", "windowed,lethe,100,19,"));
        String keyed = md.substring(md.indexOf("### keyed"), md.indexOf("### windowed"));
        assertTrue(keyed.contains("| checkpoints (steady) | of them linking a flush (Lethe) |"), keyed);
        assertTrue(keyed.contains("| lethe | 20 | 7 |"), keyed);
        assertTrue(keyed.contains("| forst | 21 | - |"), keyed);
        String windowed = md.substring(md.indexOf("### windowed"));
        assertTrue(windowed.contains("| lethe | 19 | - |"), windowed);
    }

    /**
     * Large state: Lethe's flushes and heap trims get a table of their own, one row per Lethe configuration
     * that counted them; peers and runs from before the counts get none.
     */
    @Test
    void lethesFlushesAndHeapTrimsAreShown(@TempDir Path tmp) throws Exception {
        String md = reportWithLargeState(tmp, List.of("job,backend,steady_records_per_s,checkpoint_flushes,"
                        + "checkpoint_flush_wait_ms_mean,flushes,flush_mb_mean,flush_ms_mean,flush_delay_ms_mean,"
                        + "heap_trims,heap_trim_ms_mean,compaction_give_way_ms",
                "keyed-async,lethe,100,17,120,30,50.5,674,0.5,4,12,2100", "keyed-async,lethe-adaptor,90,9,80,20,40,500,0,0,,0",
                "keyed-async,forst,80,,,,,,,,,", "windowed,lethe,100,,,,,,,,,"));
        String keyed = md.substring(md.indexOf("### keyed-async"), md.indexOf("### windowed"));
        String flushes = keyed.substring(keyed.indexOf("Lethe's flushes and heap trims in the steady phase:"));
        assertTrue(flushes.contains("| lethe | 30 | 50.5 | 674 | 0.500 | 17 | 120 | 4 | 12 | 2,100 |"), flushes);
        assertTrue(flushes.contains("| lethe-adaptor | 20 | 40 | 500 | 0 | 9 | 80 | 0 | - | 0 |"), flushes);
        assertFalse(flushes.substring(0, flushes.indexOf("\n\n", flushes.indexOf("| --- |"))).contains("forst"),
                flushes);
        String windowed = md.substring(md.indexOf("### windowed"));
        assertFalse(windowed.contains("Lethe's flushes and heap trims"), windowed);
    }

    /**
     * Large state with asynchronous state: Lethe's executor and Lethe through Flink's synchronous adaptor
     * are each judged against the best peer on their own, and neither against the other.
     */
    @Test
    void eachLetheConfigurationIsJudgedOnItsOwn(@TempDir Path tmp) throws Exception {
        String md = reportWithLargeState(tmp, List.of("job,backend,steady_records_per_s,latency_p99_us",
                "keyed-async,lethe,300,80000", "keyed-async,lethe-adaptor,200,1000", "keyed-async,rocksdb,100,2000",
                "keyed-async,forst,150,90000"));
        String job = md.substring(md.indexOf("### keyed-async"));
        assertTrue(job.contains("| lethe-adaptor | "), job);
        String executor = job.substring(job.indexOf("Lethe against the best on-disk peer:"),
                job.indexOf("Lethe through Flink's synchronous adaptor"));
        // 300 against ForSt's 150; 80 ms against RocksDB's 2: the adaptor's 1 ms is not a peer.
        assertTrue(executor.contains("| records/s, steady | higher | forst | 2.00 (1 run) | ahead |"), executor);
        assertTrue(executor.contains("| latency p99 | lower | rocksdb | 40.0 (1 run) | behind |"), executor);
        String adaptor = job.substring(job.indexOf("Lethe through Flink's synchronous adaptor (Lethe's default) against"
                + " the best on-disk peer:"));
        assertTrue(adaptor.contains("| records/s, steady | higher | forst | 1.33 (1 run) | ahead |"), adaptor);
        assertTrue(adaptor.contains("| latency p99 | lower | rocksdb | 0.50 (1 run) | ahead |"), adaptor);
        assertTrue(md.contains("| Large state `keyed-async` through Flink's synchronous adaptor (Lethe's default):"
                + " latency p99 (vs best on-disk peer) | 0.50 (1 run) | lower | ahead |"), md);
    }
    /** Live disk size and expiry lag come from the drain's second half of the timeline, not its backlog. */
    @Test
    void kafkaStreamsJudgesLiveOperationFromTheDrainsSecondHalf(@TempDir Path tmp) throws Exception {
        String md = reportOnSyntheticResults(tmp.resolve("data"), tmp.resolve("report.md"));
        String streams = md.substring(md.indexOf("## Kafka Streams"));
        assertTrue(streams.contains("| records/s | higher | rocksdb | 0.90 (1 round) | behind |"), streams);
        assertTrue(streams.contains("| CPU of the application per record | lower | rocksdb-tuned | 0.80 (1 round) |"
                + " ahead |"), streams);
        assertTrue(streams.contains("| state directory on disk, live | lower | rocksdb-tuned | 0.50 (1 round) |"),
                streams);
        assertTrue(streams.contains("| expired windows still on disk, live (max) | lower | rocksdb-tuned | 0.033 (1"),
                streams);
    }

    @Test
    void missingPartsSayNotRun(@TempDir Path tmp) throws Exception {
        Path data = tmp.resolve("data");
        Files.createDirectories(data);
        write(data, "engine-ops.csv", engineOps());
        Path report = tmp.resolve("out/report.md");
        Report.write(data, report);
        String md = Files.readString(report);
        SECTIONS.forEach(s -> assertTrue(md.contains(s), "section " + s));
        assertEquals(7, md.split("not run", -1).length - 1, md);
        assertTrue(md.contains("](../data/engine-ops.png)"), md);
        assertEquals(Charts.WIDTH, ImageIO.read(data.resolve("engine-ops.png").toFile()).getWidth());
        assertFalse(Files.exists(data.resolve("ycsb-space-amp.png")));
    }

    // ---------------------------------------------------------------- synthetic results

    /** Writes every part's synthetic results to {@code data} and the report on them; returns it. */
    static String reportOnSyntheticResults(Path data, Path report) throws IOException {
        writeAll(data);
        Report.write(data, report);
        return Files.readString(report);
    }

    static void writeAll(Path data) throws IOException {
        Files.createDirectories(data);
        write(data, "environment.csv", List.of("key,value", "command,benchmarks/run.sh full", "mode,full",
                "cpu,Test CPU, 2 cores", "java,17"));
        write(data, "engine-ops.csv", engineOps());
        write(data, "engine-ops.settings.csv", List.of("key,value", "what,JMH throughput", "forks,1"));
        List<String> ycsb = new ArrayList<>(List.of("round,system,delete_percent,threshold_s,space_amp,write_amp,"
                + "lookups_per_s,ops_per_s,compactions,compaction_bytes_written,tombstones_end,"
                + "max_tombstone_age_end_s,tombstones_over_dth_end,tombstones_idle,max_tombstone_age_idle_s,"
                + "tombstones_over_dth_idle"));
        List<String> ages = new ArrayList<>(List.of("round,system,delete_percent,file_age_s,file_age_upper_s,"
                + "tombstones"));
        String[] systems = {"lethe", "rocksdb", "rocksdb-ttl"};
        for (int round = 1; round <= 2; round++) {
            for (int p : new int[] {2, 10}) {
                for (int s = 0; s < systems.length; s++) {
                    // Write amplification: lethe 3, rocksdb 4, rocksdb-ttl 1.5 (the best variant).
                    ycsb.add(String.format(Locale.ROOT, "%d,%s,%d,20.0,%.2f,%.2f,%d,%d,%d,%d,%d,%.1f,%d,%d,%.1f,%d",
                            round, systems[s], p, 1.2 + s * 0.3 + p / 100.0, s == 2 ? 1.5 : 3.0 + s,
                            50000 + round * 1000 - s * 5000, 100000, 10 + s, 1 << 20, 1000 * p, 15.0 + 10 * s,
                            100 * s, 10 * s, 5.0 * s, 10 * s));
                    for (int f = 1; f <= 3; f++) {
                        ages.add(String.format(Locale.ROOT, "%d,%s,%d,%.3f,%.3f,%d", round, systems[s], p,
                                f * (6.0 + 6 * s), f * (7.0 + 6 * s), 100 * f));
                    }
                }
            }
        }
        write(data, "ycsb.csv", ycsb);
        write(data, "ycsb-tombstone-ages.csv", ages);
        write(data, "ycsb.settings.csv", List.of("key,value", "what,delete-heavy YCSB-A.", "rounds,2"));
        List<String> secondary = new ArrayList<>(List.of("round,correlation,selectivity,system,h,millis,bytes_read,"
                + "bytes_written,pages_dropped,page_bytes_dropped,pages_rewritten,deleted,lookup_us,lookup_bytes,"
                + "allocated_before,allocated_after"));
        for (int round = 1; round <= 2; round++) {
            for (String corr : List.of("uncorrelated", "correlated")) {
                for (double sel : new double[] {0.001, 0.01, 0.142857}) {
                    for (int h : new int[] {1, 4, 8, 16}) {
                        if (h == 16 && sel == 0.001 && corr.equals("correlated")) {
                            continue; // a gap in a chart's line
                        }
                        // 100 MiB before; Lethe frees half the deleted share, RocksDB's scan all of it.
                        secondary.add(String.format(Locale.ROOT, "%d,%s,%s,lethe,%d,%.1f,%d,%d,%d,%d,%d,%d,%.1f,%d,"
                                + "%d,%d", round, corr, sel, h, (5.0 + h) * round, (long) (sel * 1e8 / h),
                                (long) (sel * 1e7), (long) (sel * h * 100), (long) (sel * h * 409600), 3,
                                (long) (sel * 1e6), 2.0 + h / 4.0, 4096 * h, 100L << 20,
                                (100L << 20) - (long) (sel * (50L << 20))));
                    }
                    secondary.add(String.format(Locale.ROOT, "%d,%s,%s,rocksdb-scan,0,%.1f,%d,%d,0,0,0,%d,2.0,4096,"
                            + "%d,%d", round, corr, sel, 100.0 * round * round, 200_000_000L, (long) (sel * 1e8),
                            (long) (sel * 1e6), 100L << 20, (100L << 20) - (long) (sel * (100L << 20))));
                    if (corr.equals("correlated")) {
                        secondary.add(String.format(Locale.ROOT, "%d,%s,%s,rocksdb-deleterange,0,1.0,1000,2000,0,0,0,"
                                + "%d,2.0,4096", round, corr, sel, (long) (sel * 1e6)));
                    }
                }
            }
        }
        write(data, "secondary-deletes.csv", secondary);
        write(data, "secondary-deletes.settings.csv", List.of("key,value", "entries,1000000"));
        List<String> jobs = new ArrayList<>(List.of("job,backend,round,records,rate,seconds,records_per_s,"
                + "steady_records_per_s,cpu_us_per_record,latency_p50_us,latency_p99_us,bytes_written_per_record,"
                + "state_bytes_written_per_record,local_max_bytes,local_end_bytes,checkpoints,max_checkpoint_bytes,"
                + "final_checkpoint_bytes,checkpointed_bytes_per_record"));
        List<String> samples = new ArrayList<>(List.of("job,backend,round,ms,local_bytes"));
        List<String> checkpoints = new ArrayList<>(List.of("job,backend,round,checkpoint,ms,full_bytes,"
                + "checkpointed_bytes,metadata_bytes,sync_ms,async_ms,final"));
        String[] backends = {"lethe", "rocksdb", "forst", "hashmap"};
        // Steady records/s: lethe 100 k, rocksdb 90 k, forst 125 k (the best peer), hashmap 200 k.
        long[] steady = {100_000, 90_000, 125_000, 200_000};
        for (String job : List.of("tumbling", "ttl")) {
            boolean paced = job.equals("ttl");
            for (int round = 1; round <= 2; round++) {
                for (int b = 0; b < backends.length; b++) {
                    double bytesPerRecord = (b == 0 ? 50 : 100) * round;
                    boolean checkpointed = !(paced && backends[b].equals("hashmap"));
                    String checkpoint = checkpointed ? Long.toString((b + 1L) << 22) : "";
                    // ttl (paced): latency p99 lethe 5 ms, rocksdb 10 ms (the best peer), forst 15 ms.
                    jobs.add(String.format(Locale.ROOT, "%s,%s,%d,1000000,%d,10.0,%d,%s,%.1f,%s,%s,%.1f,%.1f,%d,%d,%d,"
                            + "%s,%s,%s", job, backends[b], round, paced ? 50_000 : 0, 100000 + b * 10000 + round,
                            paced ? "" : Long.toString(steady[b]), 10.0 + b, paced ? Long.toString(1000 * (b + 1)) : "",
                            paced ? Long.toString(5000 * (b + 1)) : "", bytesPerRecord, bytesPerRecord / 2,
                            (b + 1) << 24, (b + 1) << 23, checkpointed ? 2 : 0, checkpoint, checkpoint,
                            checkpointed ? "4.5" : ""));
                    for (int ms = 0; ms <= 2000; ms += 250) {
                        samples.add(String.format(Locale.ROOT, "%s,%s,%d,%d,%d", job, backends[b], round, ms,
                                (long) (ms * 4096L * (b + 1))));
                    }
                    for (int c = 1; checkpointed && c <= 2; c++) {
                        checkpoints.add(String.format(Locale.ROOT, "%s,%s,%d,%d,%d,%d,%d,1000,5,50,%d", job,
                                backends[b], round, c, c * 1000, (b + 1L) << 22, (b + 1L) << (22 - c), c == 2 ? 1 : 0));
                    }
                }
            }
        }
        write(data, "jobs.csv", jobs);
        write(data, "jobs-state-size.csv", samples);
        write(data, "jobs-checkpoints.csv", checkpoints);
        write(data, "jobs.settings.csv", List.of("key,value", "bytes written,what the process wrote, per record"));
        writeLargeState(data);
        writeNexmark(data);
        writeStreams(data);
    }

    /**
     * Large-state runs: Lethe makes 100 records/s on both jobs, RocksDB 80, ForSt 125 (the best peer);
     * ForSt refuses canonical savepoints; Lethe restores from its savepoint in 880 ms, the others in 800.
     * Every run has 20 timeline samples.
     */
    static void writeLargeState(Path data) throws IOException {
        List<String> rows = new ArrayList<>(List.of("job,backend,logical_state_bytes,steady_records_per_s,"
                + "latency_p99_us,savepoint,savepoint_ms,restore_savepoint_ms,restore_checkpoint_ms,cold_cache"));
        List<String> timeline = new ArrayList<>(List.of("job,backend,seconds,phase,records_per_s,latency_p99_us,"
                + "local_bytes,rss_bytes,container_bytes"));
        Map<String, Integer> rate = Map.of("lethe", 100, "rocksdb", 80, "rocksdb-heap-timers", 80, "forst", 125);
        for (String job : List.of("keyed", "windowed")) {
            for (String backend : List.of("lethe", "rocksdb", "rocksdb-heap-timers", "forst")) {
                if (job.equals("keyed") && backend.equals("rocksdb-heap-timers")) {
                    continue;
                }
                boolean forst = backend.equals("forst");
                rows.add(String.format("%s,%s,5000000000,%d,50,%s,%s,%s,700,dropped", job, backend,
                        rate.get(backend), forst ? "refused by the backend" : "canonical", forst ? "" : "900",
                        forst ? "" : backend.equals("lethe") ? "880" : "800"));
                for (int t = 1; t <= 20; t++) {
                    timeline.add(String.format("%s,%s,%d,steady,%d,60,%d,%d,%d", job, backend, t,
                            rate.get(backend), t * 1048576L, 500 * 1048576L, 4000 * 1048576L));
                }
            }
        }
        write(data, "largestate.csv", rows);
        write(data, "largestate-timeline.csv", timeline);
    }

    /** Nexmark: q4 and q5, Lethe at 90 events/s, RocksDB 100 (the best peer), ForSt 50; every result equal. */
    static void writeNexmark(Path data) throws IOException {
        List<String> rows = new ArrayList<>(List.of("query,backend,round,events_per_s,local_max_bytes,"
                + "max_checkpoint_bytes,result_rows,equal_to_hashmap"));
        Map<String, Integer> rate = Map.of("lethe", 90, "rocksdb", 100, "rocksdb-heap-timers", 60, "forst", 50,
                "hashmap", 200);
        for (String q : List.of("q4", "q5")) {
            for (String backend : List.of("lethe", "rocksdb", "rocksdb-heap-timers", "forst", "hashmap")) {
                rows.add(String.format("%s,%s,1,%d,1048576,1048576,10,%s", q, backend, rate.get(backend),
                        backend.equals("hashmap") ? "reference" : "yes"));
            }
        }
        write(data, "nexmark.csv", rows);
        List<String> async = new ArrayList<>(List.of("query,backend,round,events_per_s,local_max_bytes,"
                + "max_checkpoint_bytes,result_rows,equal_to_rocksdb,async_requests_per_batch,async_state,"
                + "paced_events_per_s,latency_p50_us,latency_p99_us"));
        Map<String, Integer> asyncRate = Map.of("lethe", 90, "lethe-adaptor", 120, "forst", 30, "rocksdb", 100);
        for (String backend : List.of("lethe", "lethe-adaptor", "forst", "rocksdb")) {
            async.add(String.format("q20,%s,1,%d,1048576,%d,10,%s,%s,%s", backend, asyncRate.get(backend),
                    backend.startsWith("lethe") ? 1048576 : 2097152,
                    backend.equals("rocksdb") ? "reference" : "yes", backend.equals("lethe") ? "4.5" : "",
                    !backend.equals("rocksdb")));
        }
        Map<String, Integer> p99 = Map.of("lethe", 200, "lethe-adaptor", 40, "forst", 1000, "rocksdb", 50);
        for (String backend : List.of("lethe", "lethe-adaptor", "forst", "rocksdb")) {
            async.add(String.format("q20,%s,1,4000,1048576,1048576,10,%s,%s,%s,4000,%d,%d", backend,
                    backend.equals("rocksdb") ? "reference" : "yes", backend.equals("lethe") ? "2.5" : "",
                    !backend.equals("rocksdb"), p99.get(backend) / 2, p99.get(backend)));
        }
        write(data, "nexmark-async.csv", async);
    }

    /**
     * Kafka Streams: one round; Lethe at 90 records/s against RocksDB's 100 (the tuned stores 80); in
     * the drain's second half Lethe's state directory holds 50 bytes against the tuned stores' 100 and
     * its expired windows stay 10 s against the tuned stores' 300 (the shipped ones' 400).
     */
    static void writeStreams(Path data) throws IOException {
        List<String> rows = new ArrayList<>(List.of("system,round,clicks,seconds,records_per_s,tasks,"
                + "disk_bytes_main_end,disk_bytes_max,open_files_max,rss_max_bytes,native_max_bytes,"
                + "native_per_task_bytes,expired_on_disk_main_max_s,cpu_us_per_record,output_keys_checked,"
                + "output_fingerprint"));
        List<String> timeline = new ArrayList<>(List.of("system,round,phase,elapsed_s,clicks,stream_time,min_live,"
                + "oldest_on_disk,expired_on_disk_s,disk_bytes,open_files,rss_bytes,native_bytes"));
        Map<String, int[]> by = Map.of("lethe", new int[] {90, 50, 10, 8}, "rocksdb", new int[] {100, 200, 400, 12},
                "rocksdb-tuned", new int[] {80, 100, 300, 10});
        by.forEach((system, v) -> {
            rows.add(String.format("%s,1,1000,10,%d,4,100,200,10,1000,400,100,60,%d,5,00ff", system, v[0], v[3]));
            for (int t = 0; t < 10; t++) {
                // Half-way through the drain the backlog is gone: only its second half counts as live.
                boolean late = t >= 7;
                timeline.add(String.format("%s,1,%s,%d,1000,0,0,0,%d,%d,10,1000,400", system,
                        t < 4 ? "main" : "drain", t, late ? v[2] : 999, late ? v[1] : 999));
            }
        });
        write(data, "streams.csv", rows);
        write(data, "streams-timeline.csv", timeline);
    }

    /** The report of every section's test data, with {@code rows} as the large-state results. */
    private static String reportWithLargeState(Path tmp, List<String> rows) throws IOException {
        Path data = tmp.resolve("data");
        writeAll(data);
        write(data, "largestate.csv", rows);
        Path report = tmp.resolve("report.md");
        Report.write(data, report);
        return Files.readString(report);
    }

    static List<String> engineOps() {
        return List.of("round,operation,engine,ops_per_s,score_error", "1,put,lethe,200,1", "1,put,rocksdb,100,1",
                "2,put,lethe,1200,1", "2,put,rocksdb,300,1", "1,getHit,lethe,990,1", "1,getHit,rocksdb,1000,1",
                "2,getHit,lethe,1010,1", "2,getHit,rocksdb,1000,1", "1,getMiss x2,lethe,200,60",
                "1,getMiss x2,rocksdb,100,50", "2,getMiss x2,lethe,220,5", "2,getMiss x2,rocksdb,100,5",
                // multiGet: Lethe 1.5x its gets on the calling thread, 2.1x with a helper; RocksDB 1.2x.
                "1,multiGet100,lethe,1485,1", "2,multiGet100,lethe,1515,1", "1,multiGet100,rocksdb,1200,1",
                "2,multiGet100,rocksdb,1200,1", "1,multiGet100 / 1 helper thread,lethe,2079,1",
                "2,multiGet100 / 1 helper thread,lethe,2121,1");
    }

    static void write(Path dir, String name, List<String> lines) throws IOException {
        Files.write(dir.resolve(name), lines);
    }
}
