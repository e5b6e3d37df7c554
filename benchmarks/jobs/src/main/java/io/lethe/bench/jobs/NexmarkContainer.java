package io.lethe.bench.jobs;

import org.apache.flink.configuration.MemorySize;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Nexmark with state far larger than memory: with {@code -Dlethe.bench.nexmark.container=<size>} the
 * benchmark runs again in a JVM of its own inside a memory cgroup of that size ({@link MemoryCgroup}),
 * with a heap of {@code lethe.bench.nexmark.heap} (default 1g): the heap, managed memory, the JVM's
 * other memory and the page cache of every backend's files share the limit, as in a TaskManager
 * container, so the page cache cannot hold state larger than what the limit leaves.
 */
final class NexmarkContainer {
    static final String CONTAINER_PROPERTY = "lethe.bench.nexmark.container";
    static final String HEAP_PROPERTY = "lethe.bench.nexmark.heap";

    private NexmarkContainer() {}

    /** A memory limit and heap for runs that did not name their own (the asynchronous part's full mode). */
    static void defaults(String container, String heap) {
        if (System.getProperty(CONTAINER_PROPERTY) == null) {
            System.setProperty(CONTAINER_PROPERTY, container);
        }
        if (System.getProperty(HEAP_PROPERTY) == null) {
            System.setProperty(HEAP_PROPERTY, heap);
        }
    }

    /** Whether this JVM should start the benchmark again inside a cgroup (asked for, and not inside one yet). */
    static boolean wanted() {
        return System.getProperty(CONTAINER_PROPERTY) != null
                && System.getProperty(LargeStateBench.CGROUP_PROPERTY) == null;
    }

    /** Runs the benchmark with {@code args} in a cgroup-limited JVM, passing on every lethe.bench property; its exit code. */
    static int run(String[] args) throws IOException, InterruptedException {
        String container = System.getProperty(CONTAINER_PROPERTY);
        MemoryCgroup cgroup = MemoryCgroup.create("lethe-bench-nexmark", MemorySize.parse(container).getBytes());
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx" + heap(), "-D" + LargeStateBench.CGROUP_PROPERTY + "=" + cgroup.dir()));
        for (String name : System.getProperties().stringPropertyNames()) {
            if (name.startsWith("lethe.bench.")) {
                cmd.add("-D" + name + "=" + System.getProperty(name));
            }
        }
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), NexmarkBench.class.getName()));
        cmd.addAll(List.of(args));
        System.out.printf(Locale.ROOT, "Running in a memory cgroup of %s (heap %s)%n", container, heap());
        int exit = new ProcessBuilder(cgroup.wrap(cmd)).inheritIO().start().waitFor();
        if (exit != 0 && cgroup.oomKills() > 0) {
            System.err.printf(Locale.ROOT, "The benchmark's JVM was killed (exit code %d): its memory reached the"
                    + " cgroup's limit of %s; the runs it had not finished have no results%n", exit, container);
        }
        return exit;
    }

    /** What the settings say of the memory limit. */
    static String limit() {
        if (System.getProperty(LargeStateBench.CGROUP_PROPERTY) == null) {
            return "none: the page cache may hold the state";
        }
        return String.format(Locale.ROOT, "%s (a memory cgroup over the whole benchmark JVM: heap %s + managed memory"
                + " %s + the JVM's other memory and the page cache of every backend's files)",
                System.getProperty(CONTAINER_PROPERTY), heap(), ExpiryJobBench.MANAGED_MEMORY);
    }

    private static String heap() {
        return System.getProperty(HEAP_PROPERTY, "1g");
    }
}
