package io.lethe.it;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.client.program.PackagedProgram;
import org.apache.flink.client.program.PackagedProgramUtils;
import org.apache.flink.client.program.rest.RestClusterClient;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ConfigurationUtils;
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.configuration.GlobalConfiguration;
import org.apache.flink.runtime.clusterframework.TaskExecutorProcessSpec;
import org.apache.flink.runtime.clusterframework.TaskExecutorProcessUtils;
import org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobgraph.SavepointRestoreSettings;
import org.apache.flink.runtime.jobmanager.JobManagerProcessSpec;
import org.apache.flink.runtime.jobmanager.JobManagerProcessUtils;
import org.apache.flink.runtime.messages.webmonitor.ClusterOverview;
import org.apache.flink.runtime.rest.messages.EmptyRequestBody;
import org.apache.flink.runtime.rest.messages.JobMessageParameters;
import org.apache.flink.runtime.rest.messages.checkpoints.CheckpointConfigHeaders;
import org.apache.flink.runtime.rest.messages.checkpoints.CheckpointingStatistics;
import org.apache.flink.runtime.rest.messages.checkpoints.CheckpointingStatisticsHeaders;
import org.apache.flink.runtime.rest.util.RestMapperUtils;
import org.apache.flink.runtime.taskexecutor.TaskManagerRunner;
import org.apache.flink.runtime.util.config.memory.ProcessMemoryUtils;
import org.apache.flink.util.FileUtils;

import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * A standalone Flink session cluster of separate OS processes on this machine: one JobManager
 * ({@link StandaloneSessionClusterEntrypoint}) and two TaskManagers ({@link TaskManagerRunner}) of
 * two slots each, every one a {@code java} process of its own ({@link FlinkProcess}), started the
 * way a distribution's scripts start them, but from Maven artifacts: the class path is what a
 * distribution's {@code lib/} holds (Flink's modules, log4j, lethe-statebackend, lethe-native),
 * listed by the build in {@code target/flink-lib.classpath}. Jobs go in through Flink's REST client
 * like {@code flink run}: a {@link PackagedProgram} from the user's jar.
 *
 * <p>The configuration is generated into {@code <dir>/conf/config.yaml} from a base configuration
 * (the examples' {@code config.yaml}) with: free ports on the loopback interface, checkpoints and
 * savepoints in {@code <dir>}, each process's temporary directories (and so Lethe's local files)
 * in {@code <dir>/tmp/<process>}, small memory, a fixed-delay restart strategy, short heartbeats
 * (a killed TaskManager is noticed in seconds) and {@link LogReporter} writing Lethe's metrics to
 * the TaskManagers' logs every {@link #METRICS_INTERVAL}. Logs stay in {@code <dir>/log}; {@link
 * #close()} stops every process (also after a failed test) and removes the checkpoints, savepoints
 * and temporary files.
 *
 * <p>Not thread-safe: one test thread drives it.
 */
final class FlinkProcessCluster implements AutoCloseable {
    static final int SLOTS_PER_TASK_MANAGER = 2;
    static final int TASK_MANAGERS = 2;
    /** Often enough that a run of a few seconds reports metrics, rarely enough to keep logs short. */
    static final Duration METRICS_INTERVAL = Duration.ofSeconds(2);
    /** Written by maven-dependency-plugin (integration-tests/pom.xml) before the tests run. */
    private static final Path LIB_CLASSPATH_FILE = Path.of("target", "flink-lib.classpath");
    /** Flink's start-up on two busy cores takes 5 to 15 s; 90 s means something is wrong. */
    private static final Duration START_TIMEOUT = Duration.ofSeconds(90);

    private final Path dir;
    private final Path confDir;
    private final Path logDir;
    private final Configuration configuration;
    private final String classPath;
    private final FlinkProcess jobManager;
    private final List<FlinkProcess> taskManagers = new ArrayList<>();
    private final Thread killOnExit;
    private RestClusterClient<String> client;
    private int taskManagersStarted;

    private FlinkProcessCluster(Path dir, Configuration configuration, String classPath) throws IOException {
        this.dir = dir;
        this.confDir = dir.resolve("conf");
        this.logDir = dir.resolve("log");
        this.configuration = configuration;
        this.classPath = classPath;
        this.jobManager = FlinkProcess.start("jobmanager", StandaloneSessionClusterEntrypoint.class.getName(),
                jobManagerJvmOptions(), classPath, confDir, logDir, jobManagerDynamicProperties());
        // A test JVM that ends without close() (killed, or System.exit) takes its cluster along.
        this.killOnExit = new Thread(this::killAll, "kill Flink processes");
        Runtime.getRuntime().addShutdownHook(killOnExit);
    }

    /**
     * Starts the JobManager and {@link #TASK_MANAGERS} TaskManagers in {@code clusterDir} (created; logs
     * stay there) with the configuration {@code baseConfDir/config.yaml} plus this cluster's
     * settings plus {@code options}, and waits until the REST endpoint reports every slot free.
     */
    static FlinkProcessCluster start(Path clusterDir, Path baseConfDir, Map<String, String> options) throws Exception {
        Path dir = clusterDir.toAbsolutePath().normalize();
        Files.createDirectories(dir.resolve("conf"));
        Files.createDirectories(dir.resolve("log"));
        Configuration conf = configuration(dir, baseConfDir, options);
        Path confDir = dir.resolve("conf");
        List<String> lines = new ArrayList<>(ConfigurationUtils.convertConfigToWritableLines(conf, true));
        Collections.sort(lines);  // flat "key: value" lines: sorted, related keys stand together
        lines.add(0, "# Generated by " + FlinkProcessCluster.class.getSimpleName() + " from "
                + baseConfDir.resolve(GlobalConfiguration.FLINK_CONF_FILENAME).toAbsolutePath().normalize());
        Files.write(confDir.resolve(GlobalConfiguration.FLINK_CONF_FILENAME), lines, StandardCharsets.UTF_8);
        Files.writeString(confDir.resolve("log4j.properties"), LOG4J_PROPERTIES, StandardCharsets.UTF_8);
        // Read back what the processes read: the file is the configuration.
        Configuration written = GlobalConfiguration.loadConfiguration(confDir.toString());
        System.out.println("Flink process cluster: configuration " + confDir.resolve("config.yaml") + ", logs "
                + dir.resolve("log"));
        FlinkProcessCluster cluster = new FlinkProcessCluster(dir, written, classPath());
        try {
            for (int i = 0; i < TASK_MANAGERS; i++) {
                cluster.startTaskManager();
            }
            cluster.client = new RestClusterClient<>(written, "process-cluster");
            cluster.awaitFreeSlots(TASK_MANAGERS * SLOTS_PER_TASK_MANAGER, START_TIMEOUT);
            return cluster;
        } catch (Throwable t) {
            try {
                cluster.close();
            } catch (Exception e) {
                t.addSuppressed(e);
            }
            throw t;
        }
    }

    /** The base configuration with this cluster's settings and then {@code options}. */
    private static Configuration configuration(Path dir, Path baseConfDir, Map<String, String> options)
            throws IOException {
        Configuration conf = GlobalConfiguration.loadConfiguration(baseConfDir.toString());
        // Unset, Lethe keeps its files in the TaskManager's io.tmp.dirs: one directory per process.
        conf.removeKey("state.backend.lethe.localdir");
        Map<String, String> settings = new LinkedHashMap<>();
        settings.put("jobmanager.rpc.address", "localhost");
        settings.put("jobmanager.bind-host", "localhost");
        settings.put("jobmanager.rpc.port", Integer.toString(freePort()));
        settings.put("rest.address", "localhost");
        settings.put("rest.bind-address", "localhost");
        settings.put("rest.port", Integer.toString(freePort()));
        settings.put("taskmanager.host", "localhost");
        settings.put("taskmanager.bind-host", "localhost");
        // 0: each TaskManager takes free ports of the operating system's choosing.
        settings.put("taskmanager.rpc.port", "0");
        settings.put("taskmanager.data.port", "0");
        settings.put("blob.server.port", "0");
        settings.put("taskmanager.numberOfTaskSlots", Integer.toString(SLOTS_PER_TASK_MANAGER));
        // Small processes for a 2-core machine: heap 448 MiB for the JobManager; 160 MiB of task
        // heap and 333 MiB of managed memory (Lethe's budget, 2 slots) for a TaskManager.
        settings.put("jobmanager.memory.process.size", "1 gb");
        settings.put("taskmanager.memory.process.size", "1280 mb");
        settings.put("execution.checkpointing.dir", dir.resolve("checkpoints").toUri().toString());
        settings.put("execution.checkpointing.savepoint-dir", dir.resolve("savepoints").toUri().toString());
        settings.put("execution.checkpointing.interval", "1 s");
        settings.put("restart-strategy.type", "fixed-delay");
        settings.put("restart-strategy.fixed-delay.attempts", "30");
        settings.put("restart-strategy.fixed-delay.delay", "1 s");
        // A killed TaskManager: its heartbeat RPCs fail at once, two failures mark it lost (4 s).
        settings.put("heartbeat.interval", "2 s");
        settings.put("heartbeat.timeout", "20 s");
        settings.put("metrics.reporter.log.factory.class", LogReporter.Factory.class.getName());
        settings.put("metrics.reporter.log.interval", METRICS_INTERVAL.toSeconds() + " s");
        // Lethe's groups (lethe, lethe.expiry, lethe.timers) and the job's restarts and checkpoints.
        settings.put("metrics.reporter.log.filter.includes",
                "*.lethe*:*:*;jobmanager.job:numRestarts,numberOfCompletedCheckpoints:*");
        settings.putAll(options);
        settings.forEach(conf::setString);
        return conf;
    }

    /** Flink's log at INFO to {@code -Dlog.file}, as a distribution's log4j.properties does; Kafka's clients at WARN. */
    private static final String LOG4J_PROPERTIES = String.join("\n",
            "rootLogger.level = INFO",
            "rootLogger.appenderRef.file.ref = MainAppender",
            "appender.main.name = MainAppender",
            "appender.main.type = File",
            "appender.main.append = true",
            "appender.main.fileName = ${sys:log.file}",
            "appender.main.layout.type = PatternLayout",
            "appender.main.layout.pattern = %d{HH:mm:ss,SSS} %-5p %t %c{1} - %m%n",
            "logger.kafka.name = org.apache.kafka",
            "logger.kafka.level = WARN",
            "# Operators that register a metric twice (the Kafka sink does) warn at every checkpoint.",
            "logger.metricgroup.name = org.apache.flink.metrics.MetricGroup",
            "logger.metricgroup.level = ERROR",
            "");

    /**
     * The processes' class path: the build's list of what a distribution's {@code lib/} would hold
     * (the test class path without the job jar's contents, the tests' Kafka broker and the test
     * frameworks), and the location of {@link LogReporter}.
     */
    private static String classPath() throws IOException, URISyntaxException {
        if (!Files.exists(LIB_CLASSPATH_FILE)) {
            throw new IllegalStateException(LIB_CLASSPATH_FILE.toAbsolutePath() + " is missing: it is written by"
                    + " maven-dependency-plugin in the generate-test-resources phase of integration-tests;"
                    + " run the tests through Maven (mvn -pl integration-tests verify)");
        }
        List<String> entries = new ArrayList<>(Arrays.asList(
                Files.readString(LIB_CLASSPATH_FILE, StandardCharsets.UTF_8).trim().split(File.pathSeparator)));
        for (String required : List.of("flink-runtime", "flink-streaming-java", "flink-clients", "flink-rpc-akka-loader",
                "log4j-core", "lethe-statebackend", "lethe-native")) {
            if (entries.stream().noneMatch(e -> e.contains(required))) {
                throw new IllegalStateException(required + " is not in " + LIB_CLASSPATH_FILE.toAbsolutePath());
            }
        }
        entries.add(Path.of(LogReporter.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString());
        return String.join(File.pathSeparator, entries);
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    // ---- Processes.

    /** JVM options as a distribution's scripts derive them: memory from the configuration, then env.java.opts.*. */
    private List<String> jobManagerJvmOptions() {
        JobManagerProcessSpec spec = JobManagerProcessUtils.processSpecFromConfig(configuration);
        List<String> options = words(JobManagerProcessUtils.generateJvmParametersStr(spec, configuration));
        options.addAll(words(configuration.get(CoreOptions.FLINK_JVM_OPTIONS)));
        options.addAll(words(configuration.get(CoreOptions.FLINK_JM_JVM_OPTIONS)));
        return options;
    }

    private List<String> jobManagerDynamicProperties() throws IOException {
        JobManagerProcessSpec spec = JobManagerProcessUtils.processSpecFromConfig(configuration);
        List<String> properties = dynamicProperties(JobManagerProcessUtils.generateDynamicConfigsStr(spec));
        properties.add("io.tmp.dirs=" + tmpDir("jobmanager"));
        return properties;
    }

    /**
     * Starts one more TaskManager ({@code taskmanager-N}, N counting every one started) with
     * {@link #SLOTS_PER_TASK_MANAGER} slots; returns it without waiting for it to register.
     */
    FlinkProcess startTaskManager() throws IOException {
        String name = "taskmanager-" + ++taskManagersStarted;
        TaskExecutorProcessSpec spec = TaskExecutorProcessUtils.processSpecFromConfig(configuration);
        List<String> jvm = words(ProcessMemoryUtils.generateJvmParametersStr(spec));
        jvm.addAll(words(configuration.get(CoreOptions.FLINK_JVM_OPTIONS)));
        jvm.addAll(words(configuration.get(CoreOptions.FLINK_TM_JVM_OPTIONS)));
        List<String> properties = dynamicProperties(TaskExecutorProcessUtils.generateDynamicConfigsStr(spec));
        properties.add("taskmanager.resource-id=" + name);
        properties.add("io.tmp.dirs=" + tmpDir(name));
        FlinkProcess tm = FlinkProcess.start(name, TaskManagerRunner.class.getName(), jvm, classPath, confDir, logDir,
                properties);
        taskManagers.add(tm);
        return tm;
    }

    /** Kills the first TaskManager still alive with SIGKILL ({@code kill -9}); returns it. */
    FlinkProcess killTaskManager() throws InterruptedException {
        for (FlinkProcess tm : taskManagers) {
            if (tm.isAlive()) {
                tm.kill();
                System.out.println("Killed " + tm.name() + " (kill -9)");
                return tm;
            }
        }
        throw new IllegalStateException("no TaskManager is alive");
    }

    private Path tmpDir(String process) throws IOException {
        return Files.createDirectories(dir.resolve("tmp").resolve(process));
    }

    private static List<String> words(String s) {
        List<String> words = new ArrayList<>();
        for (String w : s.trim().split("\\s+")) {
            if (!w.isEmpty()) {
                words.add(w);
            }
        }
        return words;
    }

    /** {@code key=value} pairs of a scripts-style dynamic properties string {@code -D k=v -D k=v}. */
    private static List<String> dynamicProperties(String s) {
        List<String> properties = new ArrayList<>();
        for (String w : words(s)) {
            if (!w.equals("-D")) {
                properties.add(w.startsWith("-D") ? w.substring(2) : w);
            }
        }
        return properties;
    }

    // ---- REST.

    /** The configuration the processes read, for clients (as {@code flink run} reads config.yaml). */
    Configuration configuration() {
        return configuration;
    }

    RestClusterClient<String> client() {
        return client;
    }

    Path logDir() {
        return logDir;
    }

    /** The log files of every TaskManager started, killed ones included. */
    List<Path> taskManagerLogs() {
        return taskManagers.stream().map(FlinkProcess::logFile).toList();
    }

    /** Waits until the cluster has at least {@code slots} free slots (a fresh cluster: all of them). */
    void awaitFreeSlots(int slots, Duration timeout) throws Exception {
        await(slots + " free slots", timeout, () -> {
            ClusterOverview overview = overviewOrNull();
            return overview != null && overview.getNumSlotsAvailable() >= slots;
        });
    }

    private ClusterOverview overviewOrNull() {
        try {
            return client.getClusterOverview().get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            return null;  // the REST endpoint is not up yet
        }
    }

    /**
     * Submits {@code mainClass} of {@code jar} with {@code args} at {@code parallelism}, from {@code
     * savepoint} if not null, as {@code flink run} does: the program's {@code main} builds the job
     * graph here under the jar's class loader with this cluster's configuration, and the job graph
     * goes with the jar to the REST endpoint.
     */
    JobID submit(Path jar, String mainClass, int parallelism, String savepoint, String... args) throws Exception {
        if (!Files.isRegularFile(jar)) {
            throw new IllegalStateException("No job jar " + jar.toAbsolutePath() + ": build the examples module first");
        }
        SavepointRestoreSettings restore = savepoint == null ? SavepointRestoreSettings.none()
                : SavepointRestoreSettings.forPath(savepoint, false);
        PackagedProgram program = PackagedProgram.newBuilder().setJarFile(jar.toFile()).setEntryPointClassName(mainClass)
                .setArguments(args).setConfiguration(configuration).setSavepointRestoreSettings(restore).build();
        try {
            JobGraph graph = PackagedProgramUtils.createJobGraph(program, configuration, parallelism, false);
            graph.setSavepointRestoreSettings(restore);
            return client.submitJob(graph).get(2, TimeUnit.MINUTES);
        } finally {
            program.close();
        }
    }

    void awaitJobStatus(JobID job, JobStatus status, Duration timeout) throws Exception {
        await("job " + job + " " + status, timeout, () -> {
            try {
                return client.getJobStatus(job).get(10, TimeUnit.SECONDS) == status;
            } catch (Exception e) {
                return false;
            }
        });
    }

    /** Cancels {@code job} and waits until it is cancelled and its slots are free again. */
    void cancel(JobID job) throws Exception {
        client.cancel(job).get(1, TimeUnit.MINUTES);
        awaitJobStatus(job, JobStatus.CANCELED, Duration.ofMinutes(1));
    }

    /** The job's checkpoint statistics ({@code GET /jobs/:jobid/checkpoints}). */
    CheckpointingStatistics checkpoints(JobID job) throws Exception {
        JobMessageParameters parameters = CheckpointingStatisticsHeaders.getInstance().getUnresolvedMessageParameters();
        parameters.jobPathParameter.resolve(job);
        return client.sendRequest(CheckpointingStatisticsHeaders.getInstance(), parameters,
                EmptyRequestBody.getInstance()).get(30, TimeUnit.SECONDS);
    }

    /** The state backend the JobManager reports for the job ({@code GET /jobs/:jobid/checkpoints/config}). */
    String stateBackend(JobID job) throws Exception {
        JobMessageParameters parameters = CheckpointConfigHeaders.getInstance().getUnresolvedMessageParameters();
        parameters.jobPathParameter.resolve(job);
        Object info = client.sendRequest(CheckpointConfigHeaders.getInstance(), parameters,
                EmptyRequestBody.getInstance()).get(30, TimeUnit.SECONDS);
        return RestMapperUtils.getStrictObjectMapper().valueToTree(info).get("state_backend").asText();
    }

    /** Waits until the job has completed at least {@code count} checkpoints. */
    void awaitCompletedCheckpoints(JobID job, long count, Duration timeout) throws Exception {
        await(count + " completed checkpoints of job " + job, timeout, () -> {
            try {
                return checkpoints(job).getCounts().getNumberCompletedCheckpoints() >= count;
            } catch (Exception e) {
                return false;
            }
        });
    }

    /** Polls {@code condition}; fails with the processes' last log lines after {@code timeout} or when the JobManager died. */
    void await(String what, Duration timeout, BooleanSupplier condition) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (!jobManager.isAlive() || System.nanoTime() > deadline) {
                throw new AssertionError("Waited " + timeout.toSeconds() + " s for " + what + (jobManager.isAlive()
                        ? "" : ", but the JobManager died") + "\n" + describe(20));
            }
            Thread.sleep(200);
        }
    }

    /** Every process's state and last log lines. */
    String describe(int lines) {
        StringBuilder s = new StringBuilder("Flink process cluster in ").append(dir).append('\n');
        s.append(jobManager.describe(lines));
        for (FlinkProcess tm : taskManagers) {
            s.append('\n').append(tm.describe(lines));
        }
        return s.toString();
    }

    // ---- Stopping.

    /**
     * Stops the TaskManagers, then the JobManager (SIGTERM, SIGKILL after 15 s), removes the
     * checkpoints, savepoints and temporary files, and keeps the configuration and the logs.
     */
    @Override
    public void close() throws Exception {
        if (client != null) {
            client.close();
        }
        for (FlinkProcess tm : taskManagers) {
            tm.terminate();
        }
        for (FlinkProcess tm : taskManagers) {
            tm.awaitExit(Duration.ofSeconds(15));
        }
        jobManager.terminate();
        jobManager.awaitExit(Duration.ofSeconds(15));
        try {
            Runtime.getRuntime().removeShutdownHook(killOnExit);
        } catch (IllegalStateException e) {
            // The JVM is shutting down: the hook runs anyway and finds nothing alive.
        }
        for (String sub : List.of("checkpoints", "savepoints", "tmp")) {
            FileUtils.deleteDirectoryQuietly(dir.resolve(sub).toFile());
        }
        System.out.println("Flink process cluster stopped; logs in " + logDir.toAbsolutePath());
    }

    private void killAll() {
        for (FlinkProcess tm : taskManagers) {
            tm.killNow();
        }
        jobManager.killNow();
    }
}
