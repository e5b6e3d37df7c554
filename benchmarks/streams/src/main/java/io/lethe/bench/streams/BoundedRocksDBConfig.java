package io.lethe.bench.streams;

import org.apache.kafka.streams.state.RocksDBConfigSetter;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.Cache;
import org.rocksdb.CompressionType;
import org.rocksdb.LRUCache;
import org.rocksdb.Options;
import org.rocksdb.WriteBufferManager;

import java.util.Map;

/**
 * Kafka Streams' RocksDB stores as Kafka's documentation bounds their memory ("BoundedMemoryRocksDBConfig"):
 * one block cache for every store and segment of the application, memtables charged to it through a
 * write buffer manager, index and filter blocks cached with high priority (top level pinned), blocks of
 * 16 KiB as Kafka's config-setter example sets them (larger blocks: smaller index blocks in the shared
 * cache, better compression); and compression, which a deployment that watches its disk turns on: LZ4, or
 * the RocksDB compression type named by {@link #COMPRESSION}. The memory comes from {@link #MEMORY} in
 * the application's configuration: half of it at most in memtables.
 */
public class BoundedRocksDBConfig implements RocksDBConfigSetter {
    /** The application's store memory in bytes. */
    static final String MEMORY = "bench.store.memory.bytes";
    /** A {@link CompressionType} name for every level; unset: LZ4. */
    static final String COMPRESSION = "bench.store.compression";
    private static final double INDEX_FILTER_RATIO = 0.1;
    /** Kafka's documented example's block size (RocksDB's and Kafka Streams' default is 4 KiB). */
    static final long BLOCK_SIZE = 16 * 1024L;

    private static Cache cache;
    private static WriteBufferManager writeBufferManager;

    private static synchronized void share(long memory) {
        if (cache == null) {
            cache = new LRUCache(memory, -1, false, INDEX_FILTER_RATIO);
            writeBufferManager = new WriteBufferManager(memory / 2, cache);
        }
    }

    @Override
    public void setConfig(String storeName, Options options, Map<String, Object> configs) {
        share(Long.parseLong(configs.get(MEMORY).toString()));
        BlockBasedTableConfig table = (BlockBasedTableConfig) options.tableFormatConfig();
        table.setBlockCache(cache);
        table.setCacheIndexAndFilterBlocks(true);
        table.setCacheIndexAndFilterBlocksWithHighPriority(true);
        table.setPinTopLevelIndexAndFilter(true);
        table.setBlockSize(BLOCK_SIZE);
        options.setWriteBufferManager(writeBufferManager);
        Object compression = configs.get(COMPRESSION);
        options.setCompressionType(compression == null ? CompressionType.LZ4_COMPRESSION
                : CompressionType.valueOf(compression.toString()));
        options.setTableFormatConfig(table);
    }

    @Override
    public void close(String storeName, Options options) {
        // The cache and the write buffer manager are shared by every store: they stay open.
    }
}
