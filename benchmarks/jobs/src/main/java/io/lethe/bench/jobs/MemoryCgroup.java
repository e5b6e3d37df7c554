package io.lethe.bench.jobs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A memory limit on one process, as a container would set it: a cgroup (version 1 memory controller)
 * whose limit covers everything the process holds, the page cache of the files it reads and writes
 * included, which the kernel reclaims first when the limit is reached. Without such a limit a machine
 * with more memory than the state keeps all of it in the page cache, and "state far larger than
 * memory" would read it from memory after all.
 */
final class MemoryCgroup {
    private static final Path ROOT = Path.of("/sys/fs/cgroup/memory");

    private final Path dir;

    private MemoryCgroup(Path dir) {
        this.dir = dir;
    }

    /**
     * Creates the cgroup {@code name} limited to {@code limitBytes}; throws {@link IOException} saying
     * why where the machine does not allow it (no cgroup v1 memory controller, or no permission).
     */
    static MemoryCgroup create(String name, long limitBytes) throws IOException {
        Path dir = ROOT.resolve(name);
        if (!Files.isDirectory(ROOT)) {
            throw new IOException("no cgroup v1 memory controller at " + ROOT);
        }
        if (Files.isDirectory(dir)) {
            Files.delete(dir);  // left by an earlier run; empty, or this fails and says why
        }
        Files.createDirectory(dir);
        Files.writeString(dir.resolve("memory.limit_in_bytes"), Long.toString(limitBytes));
        return new MemoryCgroup(dir);
    }

    /** The cgroup at {@code dir}, made by {@link #create} (in another process). */
    static MemoryCgroup at(Path dir) {
        return new MemoryCgroup(dir);
    }

    Path dir() {
        return dir;
    }

    /** {@code command} started inside this cgroup: a shell enters it, then becomes the command. */
    List<String> wrap(List<String> command) {
        List<String> wrapped = new ArrayList<>(List.of("sh", "-c",
                "echo $$ > " + dir.resolve("cgroup.procs") + " && exec \"$@\"", "sh"));
        wrapped.addAll(command);
        return wrapped;
    }

    /** What the cgroup holds now, the page cache included, in bytes; 0 when it cannot be read. */
    long usageBytes() {
        return read("memory.usage_in_bytes");
    }

    long maxUsageBytes() {
        return read("memory.max_usage_in_bytes");
    }

    long limitBytes() {
        return read("memory.limit_in_bytes");
    }

    /** How many processes the kernel's OOM killer ended in this cgroup (the limit reached, nothing to reclaim). */
    long oomKills() {
        try {
            for (String line : Files.readAllLines(dir.resolve("memory.oom_control"))) {
                if (line.startsWith("oom_kill ")) {
                    return Long.parseLong(line.substring("oom_kill ".length()).trim());
                }
            }
        } catch (IOException | NumberFormatException e) {
            return 0;
        }
        return 0;
    }

    /** How often an allocation met the limit (and the kernel had to reclaim first). */
    long limitHits() {
        return read("memory.failcnt");
    }

    private long read(String file) {
        try {
            return Long.parseLong(Files.readString(dir.resolve(file)).trim());
        } catch (IOException | NumberFormatException e) {
            return 0;
        }
    }

    /** Removes the cgroup once its process has ended. */
    void remove() throws IOException {
        Files.deleteIfExists(dir);
    }
}
