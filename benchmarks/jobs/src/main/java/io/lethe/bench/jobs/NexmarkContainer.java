package io.lethe.bench.jobs;

import org.apache.flink.configuration.MemorySize;

import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * Nexmark with state far larger than memory: with {@code -Dlethe.bench.nexmark.container=<size>} every run
 * goes to a JVM of its own inside a fresh memory cgroup of that size ({@link MemoryCgroup}), with a heap of
 * {@code lethe.bench.nexmark.heap} (default 1g): the heap, managed memory, the JVM's other memory and the
 * page cache of the backend's files share the limit, as in a TaskManager container, so the page cache
 * cannot hold state larger than what the limit leaves. A JVM per run also keeps one backend's native
 * memory (what its allocator holds after a job) from counting against the next backend's limit.
 */
final class NexmarkContainer {
    static final String CONTAINER_PROPERTY = "lethe.bench.nexmark.container";
    static final String HEAP_PROPERTY = "lethe.bench.nexmark.heap";
    /** The first argument of a run's own JVM. */
    static final String CHILD = "run";

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

    /** Whether runs go to JVMs of their own (asked for, and this is not one of them). */
    static boolean wanted() {
        return System.getProperty(CONTAINER_PROPERTY) != null
                && System.getProperty(ContainedJvm.CGROUP_PROPERTY) == null;
    }

    /**
     * Runs one query on one backend in a JVM of its own inside a fresh cgroup, passing on every lethe.bench
     * property; a run the JVM did not report (killed by the cgroup's OOM killer, or failed) is a failed run.
     */
    static NexmarkRun run(NexmarkQueries.Query query, String backend, int round, NexmarkMode mode, Path work)
            throws IOException, InterruptedException {
        String container = System.getProperty(CONTAINER_PROPERTY);
        MemoryCgroup cgroup = MemoryCgroup.create("lethe-bench-nexmark-" + query.name() + "-" + backend,
                MemorySize.parse(container).getBytes());
        Path result = Files.createDirectories(work).resolve(query.name() + "-" + backend + "-" + round + ".run");
        Files.deleteIfExists(result);
        Map<String, String> properties = new TreeMap<>();
        for (String name : System.getProperties().stringPropertyNames()) {
            if (name.startsWith("lethe.bench.")) {
                properties.put(name, System.getProperty(name));
            }
        }
        ContainedJvm.Exit exit = ContainedJvm.run(cgroup, heap(), properties, NexmarkBench.class, List.of(CHILD,
                mode.name(), query.name(), backend, Integer.toString(round), Long.toString(mode.pacedRate()),
                work.toString(), result.toString()));
        if (exit.code() != 0 || !Files.exists(result)) {
            String why = exit.oomKills() > 0 ? String.format(Locale.ROOT, "killed by the OOM killer of its %s memory"
                    + " cgroup", container) : "its JVM exited with code " + exit.code();
            return NexmarkRun.failed(query.name(), backend, round, mode.events(), mode.pacedRate(), why);
        }
        try (ObjectInputStream in = new ObjectInputStream(Files.newInputStream(result))) {
            return (NexmarkRun) in.readObject();
        } catch (ClassNotFoundException e) {
            throw new IOException(result + ": " + e.getMessage(), e);
        } finally {
            Files.deleteIfExists(result);
        }
    }

    /** In a run's own JVM: writes what the run measured to {@code result}, for the parent to read. */
    static void report(NexmarkRun run, Path result) throws IOException {
        try (ObjectOutputStream out = new ObjectOutputStream(Files.newOutputStream(result))) {
            out.writeObject(run);
        }
    }

    /** What the settings say of the memory limit. */
    static String limit() {
        if (System.getProperty(CONTAINER_PROPERTY) == null) {
            return "none: the page cache may hold the state";
        }
        return String.format(Locale.ROOT, "%s per run (a JVM of its own in a memory cgroup: heap %s + managed memory"
                + " %s + the JVM's other memory and the page cache of the backend's files)",
                System.getProperty(CONTAINER_PROPERTY), heap(), ExpiryJobBench.MANAGED_MEMORY);
    }

    private static String heap() {
        return System.getProperty(HEAP_PROPERTY, "1g");
    }
}
