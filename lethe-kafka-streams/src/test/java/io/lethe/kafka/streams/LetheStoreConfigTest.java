package io.lethe.kafka.streams;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lethe.engine.ColumnFamilyOptions;
import io.lethe.engine.Compression;
import io.lethe.engine.DbOptions;

import org.apache.kafka.common.config.ConfigException;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Map;

/** Options under lethe.*: applied, checked with the key named, and handed to a config setter. */
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
        assertTrue(o.useWal());
        ColumnFamilyOptions cf = o.defaultColumnFamilyOptions();
        assertEquals(Compression.ZSTD, cf.compression());
        assertEquals(Compression.ZSTD, cf.bottommostCompression(), "unset: as the compression");
        assertEquals(Duration.ofMinutes(1), cf.deletePersistenceThreshold());
    }

    @Test
    void aBadValueNamesItsKey() {
        for (Map.Entry<String, Object> bad : Map.<String, Object>of(
                LetheStoreConfig.WRITE_BUFFER_BYTES, "12",
                LetheStoreConfig.PAGE_CACHE_BYTES, "lots",
                LetheStoreConfig.COMPRESSION, "gzip",
                LetheStoreConfig.BOTTOMMOST_COMPRESSION, "snappy",
                LetheStoreConfig.DELETE_PERSISTENCE_THRESHOLD_MS, "-1",
                LetheStoreConfig.CONFIG_SETTER, String.class.getName()).entrySet()) {
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
}
