package io.lethe.engine.internal;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Locale;

/**
 * Loads liblethejni from the jar, once per classloader. Each load copies the library to a fresh
 * temporary file: the JVM binds a native library file to one classloader, and Flink gives every
 * job (and every restart) its own classloader.
 */
public final class NativeLibrary {
    private static volatile boolean loaded;
    private static Throwable failure;

    private NativeLibrary() {}

    /** The resource path of the library for this platform. */
    public static String resourcePath() {
        return "/META-INF/native/" + platform() + "/liblethejni.so";
    }

    static String platform() {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
        String osName = os.contains("linux") ? "linux" : os.replaceAll("[^a-z0-9]", "");
        String archName = arch.equals("amd64") || arch.equals("x86_64") ? "x86_64" : arch;
        return osName + "-" + archName;
    }

    /** Whether this classloader has loaded the library (backends must not on the JobManager). */
    public static boolean isLoaded() {
        return loaded;
    }

    /** Loads the library if this classloader has not; throws with what to fix if impossible. */
    public static void ensureLoaded() {
        if (loaded) {
            return;
        }
        synchronized (NativeLibrary.class) {
            if (loaded) {
                return;
            }
            if (failure != null) {
                throw new IllegalStateException(failure.getMessage(), failure);
            }
            try {
                load();
                loaded = true;
            } catch (Throwable t) {
                failure = t;
                throw new IllegalStateException(t.getMessage(), t);
            }
        }
    }

    private static void load() throws IOException {
        String resource = resourcePath();
        try (InputStream in = NativeLibrary.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IOException(
                        "Lethe's native library " + resource + " is not on the classpath: this platform ("
                                + platform() + ") is not supported by this lethe-native jar, or the jar was"
                                + " built without its native part (build it with 'mvn install' on Linux x86_64)");
            }
            Path tmp = Files.createTempFile("liblethejni-", ".so");
            try {
                Files.copy(in, tmp, StandardCopyOption.REPLACE_EXISTING);
                System.load(tmp.toAbsolutePath().toString());
            } finally {
                // The loaded library stays mapped; the file is no longer needed.
                Files.deleteIfExists(tmp);
            }
        }
    }
}
