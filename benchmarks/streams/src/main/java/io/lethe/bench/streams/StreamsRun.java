package io.lethe.bench.streams;

import io.lethe.bench.jobs.DiskUsage;
import io.lethe.bench.jobs.ExperimentSettings;
import io.lethe.bench.jobs.ProcessCpu;
import io.lethe.bench.jobs.ProcessMemory;

import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * One run of the benchmark's application on one system, in a JVM of its own (so that its memory is
 * its own), driven by {@link StreamsBench} through standard input and output. It processes the main
 * topic as fast as it goes and prints {@code MAIN-DONE}; the driver then trickles clicks into the
 * drain topic in real time and, at the end, writes {@code STOP}. Every second it prints a {@code
 * SAMPLE} line (progress, stream time, the oldest window still on disk, disk blocks, open files,
 * memory); at the end a {@code RESULT} line.
 *
 * <p>Arguments: mode, system, round, bootstrap servers, state directory, drain topic, output topic.
 */
public final class StreamsRun {
    /** The columns of a SAMPLE line. */
    static final String SAMPLE_COLUMNS = "system,round,phase,elapsed_s,clicks,stream_time,min_live,oldest_on_disk,"
            + "expired_on_disk_s,disk_bytes,open_files,rss_bytes,native_bytes";
    /** The columns of a RESULT line. */
    static final String RESULT_COLUMNS = "system,round,clicks,seconds,records_per_s,tasks,disk_bytes_main_end,"
            + "disk_bytes_max,open_files_max,rss_max_bytes,native_max_bytes,native_per_task_bytes,"
            + "expired_on_disk_main_max_s,cpu_us_per_record";

    private final StreamsWorkload w;
    private final StreamsSystem system;
    private final int round;
    private final Path stateDir;
    private final StreamsWorkload.Progress progress = new StreamsWorkload.Progress();
    private final List<Sample> samples = new ArrayList<>();
    private final long start = System.nanoTime();
    private volatile String phase = "main";
    private volatile double mainSeconds;
    private volatile long mainCpuNanos;  // of the whole application process over the main topic
    private KafkaStreams streams;

    private record Sample(String phase, long clicks, double expiredOnDiskS, long diskBytes, long openFiles,
            ProcessMemory memory) {}

    private StreamsRun(StreamsWorkload w, StreamsSystem system, int round, Path stateDir) {
        this.w = w;
        this.system = system;
        this.round = round;
        this.stateDir = stateDir;
    }

    public static void main(String[] args) throws Exception {
        StreamsRun run = new StreamsRun(StreamsWorkload.of(args[0]), StreamsSystem.of(args[1]),
                Integer.parseInt(args[2]), Path.of(args[4]));
        run.run(args[3], args[5], args[6]);
        System.exit(0);  // Kafka's and RocksDB's threads may linger
    }

    private void run(String bootstrapServers, String drainTopic, String outputTopic) throws Exception {
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, "bench-" + system.id + "-" + round);
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        props.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, w.threads());
        props.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, 1);
        system.configure(props, w);
        Map<String, String> changed = ExperimentSettings.of(system.id);
        if (!changed.isEmpty()) {
            System.out.println("  " + system.id + " with changed settings (an experiment): " + changed);
            props.putAll(changed);
        }
        List<String> inputs = List.of(StreamsWorkload.MAIN_TOPIC, drainTopic);
        streams = new KafkaStreams(w.topology(inputs, outputTopic, progress), props);
        ScheduledExecutorService sampler = Executors.newSingleThreadScheduledExecutor();
        streams.start();
        sampler.scheduleAtFixedRate(this::sample, 1, 1, TimeUnit.SECONDS);
        awaitMain();
        System.out.println("MAIN-DONE");
        try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            for (String line; (line = in.readLine()) != null && !line.equals("STOP"); ) {
                phase = line;  // "drain"
            }
        }
        sampler.shutdown();
        sampler.awaitTermination(30, TimeUnit.SECONDS);
        streams.close();
        System.out.println("RESULT " + result());
    }

    private void awaitMain() throws InterruptedException {
        long last = -1;
        long lastChange = System.nanoTime();
        while (progress.clicks.get() < w.clicks()) {
            Thread.sleep(200);
            long now = progress.clicks.get();
            if (streams.state() == KafkaStreams.State.ERROR) {
                throw new IllegalStateException("the application failed");
            }
            if (now != last) {
                last = now;
                lastChange = System.nanoTime();
            } else if (System.nanoTime() - lastChange > TimeUnit.MINUTES.toNanos(5)) {
                throw new IllegalStateException("no click processed for 5 minutes, at " + now);
            }
        }
        mainSeconds = (System.nanoTime() - progress.firstNanos.get()) / 1e9;
        mainCpuNanos = ProcessCpu.nanos() - progress.firstCpuNanos.get();
    }

    private synchronized void sample() {
        long streamTime = progress.streamTime.get();
        long minLive = streamTime - w.retention().toMillis() + 1;
        long oldest = system.oldestOnDisk(streams, stateDir);
        double expired = oldest == Long.MAX_VALUE || streamTime == Long.MIN_VALUE ? 0
                : Math.max(0, minLive - oldest) / 1000.0;
        Sample s = new Sample(phase, progress.clicks.get(), expired, DiskUsage.of(stateDir), openFiles(),
                ProcessMemory.now());
        samples.add(s);
        double elapsed = (System.nanoTime() - start) / 1e9;
        System.out.printf(Locale.ROOT, "SAMPLE %s,%d,%s,%.1f,%d,%d,%d,%d,%.1f,%d,%d,%d,%d%n", system.id, round,
                s.phase, elapsed, s.clicks, streamTime, minLive, oldest == Long.MAX_VALUE ? -1 : oldest, expired,
                s.diskBytes, s.openFiles, s.memory.rssBytes(), s.memory.nativeBytes());
    }

    /** Files of the state directory this process holds open. */
    private long openFiles() {
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            return fds.filter(fd -> {
                try {
                    return Files.readSymbolicLink(fd).startsWith(stateDir);
                } catch (IOException | UnsupportedOperationException e) {
                    return false;  // closed meanwhile
                }
            }).count();
        } catch (IOException e) {
            return -1;  // no /proc: unknown
        }
    }

    private synchronized String result() {
        List<Sample> main = samples.stream().filter(s -> s.phase.equals("main")).toList();
        long nativeMax = samples.stream().mapToLong(s -> s.memory.nativeBytes()).max().orElse(0);
        return String.format(Locale.ROOT, "%s,%d,%d,%.2f,%.0f,%d,%d,%d,%d,%d,%d,%d,%.1f,%.2f", system.id, round,
                w.clicks(), mainSeconds, w.clicks() / mainSeconds, w.partitions(),
                main.isEmpty() ? 0 : main.get(main.size() - 1).diskBytes,
                samples.stream().mapToLong(Sample::diskBytes).max().orElse(0),
                samples.stream().mapToLong(Sample::openFiles).max().orElse(0),
                samples.stream().mapToLong(s -> s.memory.rssBytes()).max().orElse(0), nativeMax,
                nativeMax / w.partitions(),
                main.stream().mapToDouble(Sample::expiredOnDiskS).max().orElse(0),
                mainCpuNanos / 1000.0 / w.clicks());
    }
}
