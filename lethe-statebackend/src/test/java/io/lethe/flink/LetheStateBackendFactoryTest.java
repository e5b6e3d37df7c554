package io.lethe.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lethe.engine.ColumnFamilyOptions;
import io.lethe.engine.Compression;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.StateBackendLoader;
import org.junit.jupiter.api.Test;

/** Selecting and configuring the backend through Flink's own loader. */
class LetheStateBackendFactoryTest {

    private static Configuration letheConfig() {
        Configuration c = new Configuration();
        c.set(StateBackendOptions.STATE_BACKEND, LetheStateBackendFactory.class.getName());
        return c;
    }

    @Test
    void flinkLoadsTheBackendFromStateBackendType() throws Exception {
        Configuration c = letheConfig();
        c.set(LetheOptions.PAGES_PER_TILE, "8");
        c.set(LetheOptions.PAGE_SIZE, MemorySize.parse("16kb"));
        StateBackend backend = StateBackendLoader.loadStateBackendFromConfig(c, getClass().getClassLoader(), null);
        LetheStateBackend lethe = assertInstanceOf(LetheStateBackend.class, backend);
        assertEquals("8", lethe.get(LetheOptions.PAGES_PER_TILE));
        assertEquals(16 * 1024, lethe.get(LetheOptions.PAGE_SIZE).getBytes());
        assertEquals(10, lethe.get(LetheOptions.SIZE_RATIO));  // default
        assertTrue(lethe.useManagedMemory());
    }

    @Test
    void explicitSettingsWinOverTheClusterConfiguration() {
        LetheStateBackend explicit = new LetheStateBackend().with(LetheOptions.SIZE_RATIO, 4);
        Configuration c = letheConfig();
        c.set(LetheOptions.SIZE_RATIO, 12);
        c.set(LetheOptions.BLOOM_BITS_PER_KEY, 5);
        LetheStateBackend configured = explicit.configure(c, getClass().getClassLoader());
        assertEquals(4, configured.get(LetheOptions.SIZE_RATIO));
        assertEquals(5, configured.get(LetheOptions.BLOOM_BITS_PER_KEY));
    }

    @Test
    void pagesPerTileAcceptsAuto() {
        Configuration c = letheConfig();
        c.set(LetheOptions.PAGES_PER_TILE, "AUTO");
        assertEquals(io.lethe.engine.ColumnFamilyOptions.PAGES_PER_TILE_AUTO,
                LetheOptions.pagesPerTile(c, LetheOptions.PAGES_PER_TILE));
        assertEquals(io.lethe.engine.ColumnFamilyOptions.PAGES_PER_TILE_AUTO,
                LetheOptions.columnFamilyOptions(c).pagesPerTile());
        c.set(LetheOptions.PAGES_PER_TILE, " 64 ");
        assertEquals(64, LetheOptions.pagesPerTile(c, LetheOptions.PAGES_PER_TILE));
    }

    @Test
    void statesWithTtlTakeTheirOwnPagesPerTile() {
        Configuration c = letheConfig();
        c.set(LetheOptions.PAGES_PER_TILE, "2");
        c.set(LetheOptions.BLOOM_BITS_PER_KEY, 7);
        io.lethe.engine.ColumnFamilyOptions base = LetheOptions.columnFamilyOptions(c);
        io.lethe.engine.ColumnFamilyOptions ttl = LetheOptions.ttlColumnFamilyOptions(c, base);
        assertEquals(2, base.pagesPerTile());
        assertEquals(8, ttl.pagesPerTile(), "the default for states with a TTL");
        assertEquals(7, ttl.bloomBitsPerKey(), "everything else as the other states");
        c.set(LetheOptions.TTL_PAGES_PER_TILE, "auto");
        assertEquals(io.lethe.engine.ColumnFamilyOptions.PAGES_PER_TILE_AUTO,
                LetheOptions.ttlColumnFamilyOptions(c, base).pagesPerTile());
    }

    /** The message of the configuration error that {@code setup}, applied to a Lethe configuration, causes. */
    private String rejected(java.util.function.Consumer<Configuration> setup) {
        Configuration c = letheConfig();
        setup.accept(c);
        return assertThrows(IllegalConfigurationException.class,
                () -> new LetheStateBackendFactory().createFromConfig(c, getClass().getClassLoader())).getMessage();
    }

    @Test
    void badValuesFailWithTheOptionName() {
        String m = rejected(c -> c.set(LetheOptions.PAGES_PER_TILE, "0"));
        assertTrue(m.contains("state.backend.lethe.pages-per-tile"), m);

        m = rejected(c -> c.set(LetheOptions.PAGES_PER_TILE, "many"));
        assertTrue(m.contains("'auto'"), m);

        m = rejected(c -> c.set(LetheOptions.TTL_PAGES_PER_TILE, "5000"));
        assertTrue(m.contains("state.backend.lethe.ttl.pages-per-tile"), m);

        m = rejected(c -> c.set(LetheOptions.WRITE_BUFFER_RATIO, 1.5));
        assertTrue(m.contains("write-buffer-ratio"), m);

        m = rejected(c -> c.set(LetheOptions.DELETE_PERSISTENCE_THRESHOLD, java.time.Duration.ofNanos(500_000)));
        assertTrue(m.contains("state.backend.lethe.delete-persistence-threshold"), m);

        m = rejected(c -> c.setString("state.backend.lethe.size-ratio", "ten"));
        assertTrue(m.contains("'ten'") && m.contains("state.backend.lethe.size-ratio"), m);

        m = rejected(c -> c.set(LetheOptions.CHECKPOINT_TRANSFER_THREADS, 0));
        assertTrue(m.contains("state.backend.lethe.checkpoint.transfer.thread.num"), m);

        m = rejected(c -> c.setString("state.backend.lethe.fade.file-pick", "newest"));
        assertTrue(m.contains("MOST_DELETES"), "names the values allowed: " + m);

        m = rejected(c -> c.setString("state.backend.lethe.bottommost-compression", "snappy"));
        assertTrue(m.contains("state.backend.lethe.bottommost-compression") && m.contains("ZSTD"),
                "names the key and the codecs: " + m);

        m = rejected(c -> c.setString("state.backend.lethe.flush-compression", "lzo"));
        assertTrue(m.contains("state.backend.lethe.flush-compression") && m.contains("NONE"),
                "names the key and the codecs: " + m);

        m = rejected(c -> c.setString("state.backend.lethe.timer-service.compression", "gzip"));
        assertTrue(m.contains("state.backend.lethe.timer-service.compression") && m.contains("LZ4"),
                "names the key and the codecs: " + m);

        m = rejected(c -> c.set(LetheOptions.MAX_OPEN_FILES, 8));
        assertTrue(m.contains("state.backend.lethe.files.open"), m);

        m = rejected(c -> c.setString("state.backend.lethe.timer-service.factory", "rocksdb"));
        assertTrue(m.contains("state.backend.lethe.timer-service.factory") && m.contains("LETHE"),
                "names the key and the choices: " + m);

        m = rejected(c -> c.set(LetheOptions.TIMER_SERVICE_CACHE_SIZE, 0));
        assertTrue(m.contains("state.backend.lethe.timer-service.cache-size"), m);

        m = rejected(c -> c.setString("state.backend.lethe.timer-service.count-pending", "maybe"));
        assertTrue(m.contains("state.backend.lethe.timer-service.count-pending"), m);

        m = rejected(c -> c.setString("state.backend.lethe.dynamic-level-size", "sometimes"));
        assertTrue(m.contains("state.backend.lethe.dynamic-level-size"), m);

        m = rejected(c -> c.set(LetheOptions.HEAP_TRIM_INTERVAL, java.time.Duration.ofDays(2)));
        assertTrue(m.contains("state.backend.lethe.memory.heap-trim-interval"), m);
    }

    @Test
    void heapTrimIntervalReachesTheEngine() {
        Configuration c = new Configuration();
        assertEquals(10_000, LetheOptions.dbOptions(c, 1 << 20, 1 << 20, null).heapTrimIntervalMillis(), "the default");
        c.setString("state.backend.lethe.memory.heap-trim-interval", "0 s");
        assertEquals(0, LetheOptions.dbOptions(c, 1 << 20, 1 << 20, null).heapTrimIntervalMillis(), "off");
    }

    @Test
    void dynamicLevelSizeReachesTheEngine() {
        Configuration c = letheConfig();
        assertFalse(LetheOptions.columnFamilyOptions(c).dynamicLevelBytes(), "the default");
        c.setString("state.backend.lethe.dynamic-level-size", "true");
        assertTrue(LetheOptions.columnFamilyOptions(c).dynamicLevelBytes());
    }

    @Test
    void compressionDefaultsToLz4AboveAndZstdInTheLastLevel() {
        Configuration c = new Configuration();
        assertEquals(Compression.LZ4, LetheOptions.columnFamilyOptions(c).compression());
        assertEquals(Compression.ZSTD, LetheOptions.columnFamilyOptions(c).bottommostCompression());
        c.set(LetheOptions.COMPRESSION, Compression.NONE);
        c.set(LetheOptions.BOTTOMMOST_COMPRESSION, Compression.NONE);
        assertEquals(Compression.NONE, LetheOptions.columnFamilyOptions(c).compression());
        assertEquals(Compression.NONE, LetheOptions.columnFamilyOptions(c).bottommostCompression());
    }

    @Test
    void flushCompressionFollowsTheCompressionUnlessSet() {
        Configuration c = new Configuration();
        c.set(LetheOptions.COMPRESSION, Compression.ZSTD);
        assertEquals(Compression.ZSTD, LetheOptions.columnFamilyOptions(c).flushCompression());
        c.set(LetheOptions.FLUSH_COMPRESSION, Compression.NONE);
        assertEquals(Compression.NONE, LetheOptions.columnFamilyOptions(c).flushCompression());
        assertEquals(Compression.ZSTD, LetheOptions.columnFamilyOptions(c).compression());
        c.set(LetheOptions.TIMER_SERVICE_COMPRESSION, Compression.LZ4);
        ColumnFamilyOptions timers = LetheOptions.timerColumnFamilyOptions(c, LetheOptions.columnFamilyOptions(c));
        assertEquals(Compression.LZ4, timers.flushCompression(), "timer queues: one codec on every level");
    }

    @Test
    void openFilesReachTheEngine() {
        Configuration c = new Configuration();
        assertEquals(-1, LetheOptions.dbOptions(c, 1 << 20, 1 << 20, null).maxOpenFiles(), "every table open");
        c.set(LetheOptions.MAX_OPEN_FILES, 64);
        assertEquals(64, LetheOptions.dbOptions(c, 1 << 20, 1 << 20, null).maxOpenFiles());
    }

    /** A misspelt key would be ignored silently; a misspelt threshold would leave deletes unbounded. */
    @Test
    void unknownOptionsFailWithASuggestion() {
        Configuration c = letheConfig();
        c.setString("state.backend.lethe.delete-persistance-threshold", "10 s");
        IllegalConfigurationException e = assertThrows(IllegalConfigurationException.class,
                () -> new LetheStateBackendFactory().createFromConfig(c, getClass().getClassLoader()));
        assertTrue(e.getMessage().contains("Unknown option state.backend.lethe.delete-persistance-threshold")
                && e.getMessage().contains("did you mean state.backend.lethe.delete-persistence-threshold?"),
                e.getMessage());

        Configuration far = letheConfig();
        far.setString("state.backend.lethe.colour", "blue");
        e = assertThrows(IllegalConfigurationException.class,
                () -> new LetheStateBackendFactory().createFromConfig(far, getClass().getClassLoader()));
        assertFalse(e.getMessage().contains("did you mean"), e.getMessage());

        Configuration other = letheConfig();
        other.setString("state.backend.rocksdb.block.cache-size", "64mb");  // not ours: ignored
        new LetheStateBackendFactory().createFromConfig(other, getClass().getClassLoader());
    }

    /** Restarting cannot fix a configuration: Flink must fail the job instead of retrying forever. */
    @Test
    void configurationErrorsSuppressRestarts() {
        Configuration c = letheConfig();
        c.setString("state.backend.lethe.size-ratio", "1");
        IllegalConfigurationException e = assertThrows(IllegalConfigurationException.class,
                () -> new LetheStateBackendFactory().createFromConfig(c, getClass().getClassLoader()));
        assertTrue(org.apache.flink.runtime.executiongraph.failover.ExecutionFailureHandler.isUnrecoverableError(
                new RuntimeException("wrapped", e)));
    }

    /** Every option of {@link LetheOptions} is read from the configuration, not only its default. */
    @Test
    void everyOptionIsReadFromTheConfiguration() throws Exception {
        for (java.lang.reflect.Field f : LetheOptions.class.getFields()) {
            if (f.getType() == org.apache.flink.configuration.ConfigOption.class) {
                assertTrue(LetheStateBackend.ALL_OPTIONS.contains(f.get(null)), f.getName() + " is never read");
            }
        }
        Configuration c = letheConfig();
        c.setString("state.backend.lethe.window-expiry", "false");
        assertFalse(new LetheStateBackendFactory().createFromConfig(c, getClass().getClassLoader())
                .get(LetheOptions.WINDOW_EXPIRY));
    }

    @Test
    void backendSurvivesJavaSerialization() throws Exception {
        LetheStateBackend backend = new LetheStateBackend().with(LetheOptions.PAGES_PER_TILE, "16");
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
            out.writeObject(backend);
        }
        try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray()))) {
            LetheStateBackend copy = (LetheStateBackend) in.readObject();
            assertEquals("16", copy.get(LetheOptions.PAGES_PER_TILE));
        }
    }

    /**
     * The factory runs on the JobManager: creating and configuring the backend must not load the
     * native library. Checked in an isolated classloader, so other tests cannot interfere.
     */
    @Test
    void factoryDoesNotLoadNativeCode() throws Exception {
        List<URL> urls = new ArrayList<>();
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            urls.add(new File(entry).toURI().toURL());
        }
        try (URLClassLoader isolated = new URLClassLoader(urls.toArray(new URL[0]), ClassLoader.getPlatformClassLoader())) {
            Class<?> configClass = isolated.loadClass(Configuration.class.getName());
            Object config = configClass.getConstructor().newInstance();
            Class<?> factoryClass = isolated.loadClass(LetheStateBackendFactory.class.getName());
            Object factory = factoryClass.getConstructor().newInstance();
            Object backend = factoryClass
                    .getMethod("createFromConfig", isolated.loadClass("org.apache.flink.configuration.ReadableConfig"),
                            ClassLoader.class)
                    .invoke(factory, config, isolated);
            assertEquals(LetheStateBackend.class.getName(), backend.getClass().getName());
            Class<?> nativeLibrary = isolated.loadClass("io.lethe.engine.internal.NativeLibrary");
            assertFalse((Boolean) nativeLibrary.getMethod("isLoaded").invoke(null));
        }
    }

    @Test
    void everyOptionIsDocumented() throws Exception {
        String doc = java.nio.file.Files.readString(java.nio.file.Path.of("..", "docs", "configuration.md"));
        for (java.lang.reflect.Field f : LetheOptions.class.getFields()) {
            if (f.getType() == org.apache.flink.configuration.ConfigOption.class) {
                String key = ((org.apache.flink.configuration.ConfigOption<?>) f.get(null)).key();
                assertTrue(doc.contains("`" + key + "`"), key + " is missing from docs/configuration.md");
            }
        }
    }
}
