package io.lethe.it;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One Flink process, a JobManager or a TaskManager, in a JVM of its own as a distribution's scripts
 * start it: {@code java <JVM options> -Dlog.file=<name>.log -cp <lib> <entry point> --configDir
 * <conf> -D key=value ...}. Flink's log goes to {@code <name>.log} (the log4j configuration in the
 * conf directory), anything printed to stdout or stderr to {@code <name>.out}.
 *
 * <p>Not thread-safe; the cluster that owns it calls it from one thread, and its shutdown hook
 * only kills.
 */
final class FlinkProcess {
    private final String name;
    private final Process process;
    private final Path logFile;
    private final Path outFile;

    private FlinkProcess(String name, Process process, Path logFile, Path outFile) {
        this.name = name;
        this.process = process;
        this.logFile = logFile;
        this.outFile = outFile;
    }

    /**
     * Starts {@code entryPoint} with {@code --configDir confDir}, the log4j configuration {@code
     * confDir/log4j.properties} and {@code dynamicProperties} ({@code key=value}, each passed as
     * {@code -D key=value}).
     */
    static FlinkProcess start(String name, String entryPoint, List<String> jvmOptions, String classPath, Path confDir,
            Path logDir, List<String> dynamicProperties) throws IOException {
        Path log = logDir.resolve(name + ".log");
        Path out = logDir.resolve(name + ".out");
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(jvmOptions);
        command.add("-Dlog.file=" + log);
        command.add("-Dlog4j.configurationFile=" + confDir.resolve("log4j.properties").toUri());
        command.add("-classpath");
        command.add(classPath);
        command.add(entryPoint);
        command.add("--configDir");
        command.add(confDir.toString());
        for (String property : dynamicProperties) {
            command.add("-D");
            command.add(property);
        }
        Files.writeString(out, String.join(" ", command) + "\n\n", StandardCharsets.UTF_8);
        Process p = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(out.toFile()))
                .start();
        return new FlinkProcess(name, p, log, out);
    }

    String name() {
        return name;
    }

    Path logFile() {
        return logFile;
    }

    boolean isAlive() {
        return process.isAlive();
    }

    /** Kills the process at once (SIGKILL, as {@code kill -9}): no shutdown hook, no clean-up runs. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException(name + " (pid " + process.pid() + ") did not die within 30 s of SIGKILL");
        }
    }

    /** Asks the process to stop (SIGTERM: Flink shuts down cleanly) without waiting; see {@link #awaitExit}. */
    void terminate() {
        process.destroy();
    }

    /** Waits for the process to end, killing it if it still runs after {@code grace}. */
    void awaitExit(Duration grace) throws InterruptedException {
        if (!process.waitFor(grace.toMillis(), TimeUnit.MILLISECONDS)) {
            kill();
        }
    }

    /** For the shutdown hook of a test JVM that ends without closing the cluster. */
    void killNow() {
        process.destroyForcibly();
    }

    /** How the process ended, its pid, and the last lines of its log and its output: for failure messages. */
    String describe(int lines) {
        StringBuilder s = new StringBuilder(name).append(" (pid ").append(process.pid()).append(", ")
                .append(process.isAlive() ? "running" : "exited with " + process.exitValue()).append(")");
        for (Path file : List.of(logFile, outFile)) {
            s.append("\n--- last lines of ").append(file).append(":\n");
            for (String line : tail(file, lines)) {
                s.append(line).append('\n');
            }
        }
        return s.toString();
    }

    private static List<String> tail(Path file, int lines) {
        if (!Files.exists(file)) {
            return List.of("(no file)");
        }
        try {
            List<String> all = new String(Files.readAllBytes(file), StandardCharsets.UTF_8).lines().toList();
            return all.subList(Math.max(0, all.size() - lines), all.size());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
