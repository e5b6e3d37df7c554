package io.lethe.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * What a database occupies on disk: copies whose files no other link holds (a checkpoint's hard links
 * would keep every byte of a deleted or punched file allocated) and the blocks its table files allocate.
 */
final class OnDisk {
    private OnDisk() {}

    /** Deletes dir and everything in it. */
    static void deleteTree(Path dir) throws IOException {
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    /**
     * Copies every file of {@code from} into {@code to} byte by byte and checks that each copy has a
     * single link, so what the database later frees leaves the disk.
     */
    static void copyUnlinked(Path from, Path to) throws IOException {
        try (Stream<Path> files = Files.walk(from)) {
            for (Path f : files.toList()) {
                Path copy = to.resolve(from.relativize(f).toString());
                if (Files.isDirectory(f)) {
                    Files.createDirectories(copy);
                    continue;
                }
                Files.copy(f, copy);
                int links = (Integer) Files.getAttribute(copy, "unix:nlink");
                if (links != 1) {
                    throw new IllegalStateException(copy + " has " + links + " links");
                }
            }
        }
    }

    /**
     * The bytes the table files ({@code *.sst}, both engines' name for them) in {@code dir} allocate on
     * disk: 512-byte blocks as stat counts them, holes excluded. Logs, manifests and preallocated WAL
     * space are left out: they are not the data.
     */
    static long allocatedBytes(Path dir) throws IOException, InterruptedException {
        for (int attempt = 1; ; attempt++) {
            try {
                return tableBlocks(dir) * 512;
            } catch (IOException e) {
                // A file deleted between the listing and stat: read again.
                if (attempt == 3) {
                    throw e;
                }
            }
        }
    }

    private static long tableBlocks(Path dir) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("stat", "-c", "%b"));
        try (Stream<Path> files = Files.list(dir)) {
            files.filter(f -> f.getFileName().toString().endsWith(".sst")).forEach(f -> cmd.add(f.toString()));
        }
        if (cmd.size() == 3) {
            return 0;
        }
        Process stat = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(stat.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        if (stat.waitFor() != 0) {
            throw new IOException("stat of the table files in " + dir + " failed: " + out);
        }
        long blocks = 0;
        for (String line : out.split("\\s+")) {
            blocks += Long.parseLong(line);
        }
        return blocks;
    }

    /**
     * The allocated bytes once they stop changing (two readings 50 ms apart agree; at most 5 s): files
     * a database deletes or punches after its work is done are counted as freed.
     */
    static long settledAllocatedBytes(Path dir) throws IOException, InterruptedException {
        long last = allocatedBytes(dir);
        for (int i = 0; i < 100; i++) {
            Thread.sleep(50);
            long now = allocatedBytes(dir);
            if (now == last) {
                return now;
            }
            last = now;
        }
        return last;
    }
}
