package io.lethe.bench.jobs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The disk space a directory tree takes, as {@code du} counts it: the blocks its files occupy, each
 * file once however many hard links name it. Summing the files' sizes instead counts a checkpoint's
 * local snapshot (hard links to the live files, kept while it uploads) a second time, and counts the
 * holes punched into files as if they were still on disk.
 */
public final class DiskUsage {
    /** How results name this measure of local state (rows measured before it summed the files' sizes). */
    public static final String MEASURE = "disk blocks in use";

    private DiskUsage() {}

    /** The bytes {@code dir} takes on disk; 0 if it does not exist. */
    public static long of(Path dir) {
        if (!Files.exists(dir)) {
            return 0;
        }
        try {
            Process du = new ProcessBuilder("du", "-s", "--block-size=1", dir.toString())
                    .redirectError(ProcessBuilder.Redirect.DISCARD).start();
            String out = new String(du.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            // A file removed while du walks makes it exit with 1, its total still right.
            if (du.waitFor(60, TimeUnit.SECONDS) && !out.isEmpty()) {
                return Long.parseLong(out.substring(0, out.indexOf('\t')));
            }
        } catch (IOException | NumberFormatException | IndexOutOfBoundsException e) {
            // no du here: counted below
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return apparentOnce(dir);
    }

    /** Without du: the files' sizes, each file (inode) once, holes included. */
    private static long apparentOnce(Path dir) {
        Set<Object> seen = new HashSet<>();
        try (Stream<Path> s = Files.walk(dir)) {
            return s.filter(Files::isRegularFile).mapToLong(p -> {
                try {
                    return seen.add(Files.getAttribute(p, "unix:ino")) ? Files.size(p) : 0;
                } catch (IOException | UnsupportedOperationException e) {
                    return 0;  // deleted while walking
                }
            }).sum();
        } catch (IOException | UncheckedIOException e) {
            return 0;
        }
    }
}
