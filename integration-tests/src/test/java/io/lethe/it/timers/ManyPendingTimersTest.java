package io.lethe.it.timers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Ten million timers pending at once, in a JVM of its own with a heap of 512 MiB and managed memory
 * of 256 MiB ({@link ManyTimersJob}): with Lethe's timers in the engine the job finishes and every
 * timer fires exactly once at its time; with the same job and memory but the heap timer service,
 * the JVM runs out of heap. Both JVMs exit on the first {@code OutOfMemoryError}.
 */
class ManyPendingTimersTest {
    static final long TIMERS = Long.getLong("lethe.it.timers", 10_000_000);
    static final Pattern FIRED = Pattern.compile("FIRED (\\d+) (\\d+) (\\d+) (\\d+)");
    /** The JVM options Flink needs on Java 17 (as in the build's surefire configuration). */
    static final List<String> JVM_OPTIONS = List.of("--add-opens=java.base/java.util=ALL-UNNAMED",
            "--add-opens=java.base/java.lang=ALL-UNNAMED", "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
            "--add-opens=java.base/java.io=ALL-UNNAMED", "--add-opens=java.base/java.nio=ALL-UNNAMED",
            "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED", "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED");

    @Test
    void tenMillionPendingTimersFitWithTimersInTheEngine(@TempDir Path dir) throws Exception {
        Run run = run("LETHE", dir);
        assertEquals(0, run.exitCode, run.output);
        Matcher m = FIRED.matcher(run.output);
        assertTrue(m.find(), run.output);
        assertEquals(TIMERS, Long.parseLong(m.group(1)), "timers fired");
        assertEquals(TIMERS * (TIMERS - 1) / 2, Long.parseLong(m.group(2)), "sum of the keys whose timers fired");
        assertEquals(0, Long.parseLong(m.group(3)), "timers fired at a time other than their own");
        assertTrue(Long.parseLong(m.group(4)) > 0, "no checkpoint completed:\n" + run.output);
        System.out.println(run.output.substring(m.start()));
    }

    @Test
    void theSameJobRunsOutOfHeapWithHeapTimers(@TempDir Path dir) throws Exception {
        Run run = run("HEAP", dir);
        assertTrue(run.output.contains("java.lang.OutOfMemoryError"), run.output);
        assertEquals(3, run.exitCode, "ExitOnOutOfMemoryError's exit code\n" + run.output);
        assertTrue(!FIRED.matcher(run.output).find(), run.output);
    }

    record Run(int exitCode, String output) {}

    private static Run run(String factory, Path dir) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx512m", "-XX:+ExitOnOutOfMemoryError"));
        command.addAll(JVM_OPTIONS);
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), ManyTimersJob.class.getName(), factory,
                Long.toString(TIMERS), dir.toString()));
        Path output = dir.resolve("output.txt");
        Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile()).start();
        if (!p.waitFor(10, TimeUnit.MINUTES)) {
            p.destroyForcibly().waitFor();
            throw new AssertionError("the job did not end within 10 minutes:\n" + tail(output));
        }
        return new Run(p.exitValue(), tail(output));
    }

    /** The output's last 20,000 characters (the logs of a failing run are long). */
    private static String tail(Path output) throws IOException {
        String s = Files.readString(output);
        return s.length() <= 20_000 ? s : s.substring(s.length() - 20_000);
    }
}
