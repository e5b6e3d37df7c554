package io.lethe.kafka.streams;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lethe.engine.ColumnFamilyOptions;
import io.lethe.engine.Compression;
import io.lethe.engine.DbOptions;
import io.lethe.engine.MemoryBudget;

import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.test.InternalMockProcessorContext;
import org.apache.kafka.test.StreamsTestUtils;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

/**
 * Options under lethe.*: applied, checked with the key named, handed to a config setter; a memory
 * budget shared by an application's stores.
 */
class LetheStoreConfigTest {
    @Test
    void optionsReachTheEngine() {
        DbOptions o = LetheStoreConfig.from("s", Map.of(
                LetheStoreConfig.WRITE_BUFFER_BYTES, "1048576",
                LetheStoreConfig.PAGE_CACHE_BYTES, 0L,
                LetheStoreConfig.COMPRESSION, "zstd",
                LetheStoreConfig.DELETE_PERSISTENCE_THRESHOLD_MS, "60000",
                "unrelated.option", "x")).dbOptions();
        assertEquals(1 << 20, o.writeBufferSizeBytes());
        assertEquals(0, o.pageCacheBytes());
        assertFalse(o.useWal(), "no log by default, as Kafka Streams runs RocksDB");
        assertTrue(LetheStoreConfig.from("s", Map.of(LetheStoreConfig.WAL, "true")).dbOptions().useWal());
        assertFalse(o.compactInMemory(), "survivors of a flush go to files by default");
        assertTrue(LetheStoreConfig.from("s", Map.of(LetheStoreConfig.COMPACT_IN_MEMORY, "true")).dbOptions()
                .compactInMemory());
        ColumnFamilyOptions cf = o.defaultColumnFamilyOptions();
        assertEquals(Compression.ZSTD, cf.compression());
        assertEquals(Compression.ZSTD, cf.bottommostCompression(), "unset: as the compression");
        assertEquals(Compression.ZSTD, cf.flushCompression(), "unset: as the compression");
        assertEquals(Compression.NONE, LetheStoreConfig.from("s", Map.of(LetheStoreConfig.FLUSH_COMPRESSION, "none"))
                .dbOptions().defaultColumnFamilyOptions().flushCompression());
        assertEquals(Duration.ofMinutes(1), cf.deletePersistenceThreshold());
    }

    @Test
    void aBadValueNamesItsKey() {
        for (Map.Entry<String, Object> bad : Map.<String, Object>ofEntries(
                Map.entry(LetheStoreConfig.WRITE_BUFFER_BYTES, "12"),
                Map.entry(LetheStoreConfig.PAGE_CACHE_BYTES, "lots"),
                Map.entry(LetheStoreConfig.COMPRESSION, "gzip"),
                Map.entry(LetheStoreConfig.BOTTOMMOST_COMPRESSION, "snappy"),
                Map.entry(LetheStoreConfig.FLUSH_COMPRESSION, "lzo"),
                Map.entry(LetheStoreConfig.DELETE_PERSISTENCE_THRESHOLD_MS, "-1"),
                Map.entry(LetheStoreConfig.CONFIG_SETTER, String.class.getName()),
                Map.entry(LetheStoreConfig.MEMORY_BUDGET_BYTES, "1048576"),
                Map.entry(LetheStoreConfig.MEMORY_WRITE_BUFFER_RATIO, "1.5"),
                Map.entry(LetheStoreConfig.WAL, "maybe"),
                Map.entry(LetheStoreConfig.COMPACT_IN_MEMORY, "sometimes")).entrySet()) {
            ConfigException e = assertThrows(ConfigException.class,
                    () -> LetheStoreConfig.from("s", Map.of(bad.getKey(), bad.getValue())), bad.toString());
            assertTrue(e.getMessage().contains(bad.getKey()), e.getMessage());
        }
    }

    /** Sets a small write buffer on the store named "small" only. */
    public static class SmallBuffers implements LetheConfigSetter {
        @Override
        public void setConfig(String storeName, DbOptions.Builder db, ColumnFamilyOptions.Builder family,
                              Map<String, Object> configs) {
            if (storeName.equals("small")) {
                db.writeBufferSizeBytes(128 << 10);
                family.bottommostCompression(Compression.ZSTD);
            }
        }
    }

    @Test
    void theConfigSetterAdjustsEachStore() {
        Map<String, Object> configs = Map.of(LetheStoreConfig.CONFIG_SETTER, SmallBuffers.class.getName());
        DbOptions small = LetheStoreConfig.from("small", configs).dbOptions();
        DbOptions other = LetheStoreConfig.from("other", configs).dbOptions();
        assertEquals(128 << 10, small.writeBufferSizeBytes());
        assertEquals(Compression.ZSTD, small.defaultColumnFamilyOptions().bottommostCompression());
        assertEquals(16 << 20, other.writeBufferSizeBytes());
    }

    /** Kafka Streams hands stores its whole configuration, where unset options have null values. */
    @Test
    void theConfigSetterTakesTheApplicationsConfigurationWithItsNulls() {
        Map<String, Object> configs = new HashMap<>(new StreamsConfig(StreamsTestUtils.getStreamsConfig()).values());
        configs.put(LetheStoreConfig.CONFIG_SETTER, SmallBuffers.class.getName());
        assertTrue(configs.containsValue(null), "a Kafka Streams configuration with unset options");
        assertEquals(128 << 10, LetheStoreConfig.from("small", configs).dbOptions().writeBufferSizeBytes());
    }

    /**
     * With {@code lethe.memory.budget.bytes}, the stores of an application share one budget: their
     * write buffers together stay within its write-buffer share, and the budget lives until the last
     * store closes.
     */
    @Test
    void storesOfAnApplicationShareOneBudget(@TempDir Path dir) throws Exception {
        Properties props = StreamsTestUtils.getStreamsConfig();
        props.put(LetheStoreConfig.MEMORY_BUDGET_BYTES, String.valueOf(8L << 20));
        props.put(LetheStoreConfig.MEMORY_WRITE_BUFFER_RATIO, "0.25");
        InternalMockProcessorContext<?, ?> context = new InternalMockProcessorContext<>(dir.toFile(), Serdes.Bytes(),
                Serdes.ByteArray(), new StreamsConfig(props));
        SharedBudgets.Key key = LetheStoreConfig.from("a", context.appConfigs()).budget();
        KeyValueStore<Bytes, byte[]> a = LetheStores.persistentKeyValueStore("a").get();
        KeyValueStore<Bytes, byte[]> b = LetheStores.persistentKeyValueStore("b").get();
        a.init(context, a);
        b.init(context, b);
        byte[] value = new byte[1000];
        for (int i = 0; i < 6000; i++) {  // 6 MB each: each store's own 2 MiB write buffer would hold 4 MiB
            a.put(Bytes.wrap(("k" + i).getBytes(StandardCharsets.UTF_8)), value);
            b.put(Bytes.wrap(("k" + i).getBytes(StandardCharsets.UTF_8)), value);
        }
        MemoryBudget.Usage u = SharedBudgets.usage(key);
        for (long deadline = System.nanoTime() + 10_000_000_000L;
                u.writeBuffers() > (5L << 19) && System.nanoTime() < deadline; u = SharedBudgets.usage(key)) {
            Thread.sleep(50);  // flushes run in the background
        }
        assertEquals(8L << 20, u.capacity());
        assertTrue(u.writeBuffers() <= 5L << 19, "both stores' write buffers within the 2 MiB share: " + u);
        a.close();
        assertNotNull(SharedBudgets.usage(key), "the other store still holds the budget");
        b.close();
        assertNull(SharedBudgets.usage(key), "the budget goes with the last store");
    }

    /**
     * Unset, lethe.compression is LZ4 for key-value stores and ZSTD for window and session stores, on
     * every level; set, it applies to every kind of store.
     */
    @Test
    void eachKindOfStoreHasItsOwnCompressionUntilOneIsSet(@TempDir Path dir) {
        assertEquals(List.of("lz4,lz4", "zstd,zstd", "zstd,zstd"),
                compressionOfEachKind(dir.resolve("unset"), Map.of()));
        assertEquals(List.of("lz4,zstd", "lz4,zstd", "lz4,zstd"), compressionOfEachKind(dir.resolve("set"),
                Map.of(LetheStoreConfig.COMPRESSION, "lz4", LetheStoreConfig.BOTTOMMOST_COMPRESSION, "zstd")));
    }

    /** The engine's compression of a key-value, a window and a session store, each opened. */
    private static List<String> compressionOfEachKind(Path dir, Map<String, String> options) {
        Properties props = StreamsTestUtils.getStreamsConfig();
        props.putAll(options);
        InternalMockProcessorContext<?, ?> context = new InternalMockProcessorContext<>(dir.toFile(), Serdes.Bytes(),
                Serdes.ByteArray(), new StreamsConfig(props));
        Duration retention = Duration.ofMinutes(10);
        Duration size = Duration.ofMinutes(1);
        List<LetheStateStore> stores = List.of(
                (LetheStateStore) LetheStores.persistentKeyValueStore("kv").get(),
                (LetheStateStore) LetheStores.persistentWindowStore("window", retention, size, false).get(),
                (LetheStateStore) LetheStores.persistentSessionStore("session", retention).get());
        List<String> compressions = new ArrayList<>();
        for (LetheStateStore s : stores) {
            s.init(context, s);
            compressions.add(s.store.db().property(s.store.family(), "lethe.compression"));
            s.close();
        }
        return compressions;
    }
}
