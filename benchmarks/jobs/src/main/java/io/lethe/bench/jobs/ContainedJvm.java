package io.lethe.bench.jobs;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A benchmark run in a JVM of its own, inside a fresh memory cgroup where there is one, as a
 * TaskManager container holds a TaskManager: what one run leaves behind (native memory its allocator
 * keeps, the page cache of its files) does not count against the next. The run learns its cgroup
 * from {@link #CGROUP_PROPERTY}, to sample what the cgroup holds.
 */
final class ContainedJvm {
    /** The directory of the run's memory cgroup, in the run's JVM; absent without one. */
    static final String CGROUP_PROPERTY = "lethe.bench.cgroup";

    private ContainedJvm() {}

    /** How a run ended: its JVM's exit code, and the kills by its cgroup's OOM killer (0 without a cgroup). */
    record Exit(int code, long oomKills) {}

    /**
     * Runs {@code main} with {@code args} in a new JVM with this JVM's class path, the heap {@code
     * heap} and the system {@code properties}, inside {@code cgroup} (null: none), which it removes
     * afterwards. The run's output goes to this process's.
     */
    static Exit run(MemoryCgroup cgroup, String heap, Map<String, String> properties, Class<?> main, List<String> args)
            throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx" + heap));
        if (cgroup != null) {
            cmd.add("-D" + CGROUP_PROPERTY + "=" + cgroup.dir());
        }
        properties.forEach((name, value) -> cmd.add("-D" + name + "=" + value));
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), main.getName()));
        cmd.addAll(args);
        int code = new ProcessBuilder(cgroup == null ? cmd : cgroup.wrap(cmd)).inheritIO().start().waitFor();
        if (cgroup == null) {
            return new Exit(code, 0);
        }
        long kills = cgroup.oomKills();
        cgroup.remove();
        return new Exit(code, kills);
    }
}
