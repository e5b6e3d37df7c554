package io.lethe.examples;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/** What the local runs and benchmarks measure of, and do to, a directory tree while engines write into it. */
public final class Directories {
    private Directories() {}

    /** The sizes of the files under {@code dir} summed; 0 if it does not exist yet. */
    public static long size(Path dir) {
        try (Stream<Path> s = Files.walk(dir)) {
            return s.filter(Files::isRegularFile).mapToLong(p -> {
                try {
                    return Files.size(p);
                } catch (IOException e) {
                    return 0;  // deleted while walking
                }
            }).sum();
        } catch (IOException | UncheckedIOException e) {
            return 0;  // not created yet, or changed while walking
        }
    }

    /** The files under {@code dir}; 0 if it does not exist yet. */
    public static long files(Path dir) {
        try (Stream<Path> s = Files.walk(dir)) {
            return s.filter(Files::isRegularFile).count();
        } catch (IOException | UncheckedIOException e) {
            return 0;  // not created yet, or changed while walking
        }
    }

    /** Deletes {@code dir} and everything under it, if it exists. */
    public static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
