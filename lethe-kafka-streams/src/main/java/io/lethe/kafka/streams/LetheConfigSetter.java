package io.lethe.kafka.streams;

import io.lethe.engine.ColumnFamilyOptions;
import io.lethe.engine.DbOptions;

import java.util.Map;

/**
 * Adjusts the engine options of each Lethe store, as {@code rocksdb.config.setter} does for RocksDB
 * stores. Named by {@link LetheStoreConfig#CONFIG_SETTER}; needs a public no-argument constructor.
 * Called once per store instance as it opens, after the {@code lethe.*} options were applied.
 */
public interface LetheConfigSetter {
    /**
     * @param storeName the store's name
     * @param db the database options (write buffer, page cache, memory budget, WAL)
     * @param family the options of the store's data (compression, page size, delete persistence)
     * @param configs the application's whole configuration
     */
    void setConfig(String storeName, DbOptions.Builder db, ColumnFamilyOptions.Builder family,
                   Map<String, Object> configs);
}
