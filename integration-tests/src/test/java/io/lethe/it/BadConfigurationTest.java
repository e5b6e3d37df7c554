package io.lethe.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lethe.examples.ClickWindows;
import io.lethe.flink.LetheStateBackendFactory;

import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.executiongraph.AccessExecutionVertex;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.test.junit5.InjectMiniCluster;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.util.ExceptionUtils;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;

/**
 * Configuration a job cannot run with fails it with a message that says what to fix, and without
 * restarts (the restart strategy here would retry a hundred times): an option value that does not
 * parse, an unknown option, a local directory that cannot be created, a missing native library
 * (the example job run in a JVM whose classpath lacks it).
 */
class BadConfigurationTest {
    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER = new MiniClusterExtension(new MiniClusterResourceConfiguration.Builder()
            .setNumberTaskManagers(1).setNumberSlotsPerTaskManager(2).build());

    private static Configuration lethe(Path dir) {
        Configuration conf = new Configuration();
        conf.set(StateBackendOptions.STATE_BACKEND, LetheStateBackendFactory.class.getName());
        conf.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, dir.resolve("checkpoints").toUri().toString());
        conf.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, Duration.ofMillis(200));
        conf.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
        conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, 100);
        conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ofMillis(100));
        return conf;
    }

    /** A small keyed job; returns its client. */
    private static JobClient submit(Configuration conf) throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(2);
        env.fromSequence(0, 10_000).keyBy(i -> i % 100).reduce(Long::sum).sinkTo(new DiscardingSink<>());
        return env.executeAsync("bad configuration");
    }

    /** Runs the job to its failure; returns the whole cause chain's messages. */
    private static String failure(JobClient job) {
        ExecutionException e = assertThrows(ExecutionException.class,
                () -> job.getJobExecutionResult().get(2, TimeUnit.MINUTES));
        return ExceptionUtils.stringifyException(e);
    }

    /** Submits the job with one option set; returns the failure's whole cause chain. */
    private static String submissionFailure(Path dir, String key, String value) {
        Configuration conf = lethe(dir);
        conf.setString(key, value);
        Exception e = assertThrows(Exception.class, () -> submit(conf).getJobExecutionResult().get(2, TimeUnit.MINUTES));
        return ExceptionUtils.stringifyException(e);
    }

    @Test
    void anOptionValueThatDoesNotParse(@TempDir Path dir) {
        String text = submissionFailure(dir, "state.backend.lethe.pages-per-tile", "many");
        assertTrue(text.contains("Invalid value many for state.backend.lethe.pages-per-tile: expected an integer in"
                + " [1, 4096] or 'auto'"), text);
    }

    @Test
    void anUnknownOption(@TempDir Path dir) {
        String text = submissionFailure(dir, "state.backend.lethe.page-per-tile", "8");
        assertTrue(text.contains("Unknown option state.backend.lethe.page-per-tile of the Lethe state backend: did you"
                + " mean state.backend.lethe.pages-per-tile?"), text);
    }

    @Test
    void aLocalDirectoryThatCannotBeCreated(@TempDir Path dir, @InjectMiniCluster MiniCluster cluster) throws Exception {
        Path file = Files.writeString(dir.resolve("a-file"), "not a directory");
        Configuration conf = lethe(dir);
        conf.setString("state.backend.lethe.localdir", file.resolve("state").toString());
        JobClient job = submit(conf);
        String text = failure(job);
        assertTrue(text.contains("The Lethe local directory " + file.resolve("state") + " does not exist and cannot be"
                + " created (" + file + " is a file): set state.backend.lethe.localdir to writable local directories."), text);
        // Not restarted, although the restart strategy allows 100 attempts.
        for (AccessExecutionVertex v : cluster.getArchivedExecutionGraph(job.getJobID()).get().getAllExecutionVertices()) {
            assertEquals(0, v.getCurrentExecutionAttempt().getAttemptNumber(), v.getTaskNameWithSubtaskIndex());
        }
    }

    /** The example job in a JVM whose lethe-native jar lacks the native library. */
    @Test
    void aMissingNativeLibrary(@TempDir Path dir) throws Exception {
        List<String> classpath = new ArrayList<>();
        boolean replaced = false;
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            if (entry.contains("lethe-native")) {
                classpath.add(withoutNativeLibrary(Path.of(entry), dir.resolve("lethe-native-without-library.jar")));
                replaced = true;
            } else {
                classpath.add(entry);
            }
        }
        assertTrue(replaced, "lethe-native is not on the test classpath");
        Path output = dir.resolve("output.txt");
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", String.join(File.pathSeparator, classpath), ClickWindows.class.getName(),
                "--clicks", "2000", "--rate", "0", "--work-dir", dir.resolve("work").toString())
                .redirectErrorStream(true).redirectOutput(output.toFile()).start();
        assertTrue(p.waitFor(3, TimeUnit.MINUTES), "the job did not end");
        String text = Files.readString(output, StandardCharsets.UTF_8);
        assertNotEquals(0, p.exitValue(), text);
        assertTrue(text.contains("The job failed: The Lethe state backend cannot load its native engine: Lethe's native library"
                + " /META-INF/native/") && text.contains("Put the lethe-native jar built for this platform on the"
                + " TaskManagers' classpath (Flink's lib/ directory, beside lethe-statebackend)"), text);
    }

    /** A copy of the lethe-native jar (or classes directory) without {@code META-INF/native/}. */
    private static String withoutNativeLibrary(Path source, Path target) throws IOException {
        try (OutputStream out = Files.newOutputStream(target); JarOutputStream jar = new JarOutputStream(out)) {
            if (Files.isDirectory(source)) {
                try (Stream<Path> files = Files.walk(source)) {
                    for (Path f : files.filter(Files::isRegularFile).toList()) {
                        String name = source.relativize(f).toString().replace(File.separatorChar, '/');
                        if (!name.startsWith("META-INF/native/")) {
                            jar.putNextEntry(new JarEntry(name));
                            Files.copy(f, jar);
                        }
                    }
                }
            } else {
                try (JarFile in = new JarFile(source.toFile())) {
                    Enumeration<JarEntry> entries = in.entries();
                    while (entries.hasMoreElements()) {
                        JarEntry e = entries.nextElement();
                        if (!e.isDirectory() && !e.getName().startsWith("META-INF/native/")) {
                            jar.putNextEntry(new JarEntry(e.getName()));
                            try (InputStream data = in.getInputStream(e)) {
                                data.transferTo(jar);
                            }
                        }
                    }
                }
            }
        }
        return target.toString();
    }
}
