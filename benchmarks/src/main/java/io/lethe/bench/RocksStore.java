package io.lethe.bench;

import java.util.Arrays;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.BloomFilter;
import org.rocksdb.CompressionType;
import org.rocksdb.FlushOptions;
import org.rocksdb.LRUCache;
import org.rocksdb.Options;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksIterator;
import org.rocksdb.Slice;
import org.rocksdb.WriteOptions;

/**
 * RocksDB (rocksdbjni) with the same memory budget as Lethe, no WAL, no compression on any level
 * (rocksdbjni's default is Snappy; Lethe does not compress), a 10 bits/key Bloom filter and 4 KiB
 * blocks, as Lethe's pages.
 */
final class RocksStore implements KeyValueStore {
    static {
        RocksDB.loadLibrary();
    }

    private final LRUCache cache;
    private final BloomFilter bloom;
    private final Options options;
    private final WriteOptions writeOptions;
    private final RocksDB db;

    RocksStore(String path, long writeBufferBytes, long cacheBytes) throws Exception {
        cache = new LRUCache(cacheBytes);
        bloom = new BloomFilter(10);
        options = new Options()
                .setCreateIfMissing(true)
                .setWriteBufferSize(writeBufferBytes)
                .setMaxWriteBufferNumber(2)
                // A Bloom filter over the memtable's keys, as Lethe's memtables have: lookups of
                // absent keys skip the skip list (off by default; a tuning for reads of new keys).
                .setMemtableWholeKeyFiltering(true)
                .setMemtablePrefixBloomSizeRatio(0.02)
                .setCompressionType(CompressionType.NO_COMPRESSION)
                .setBottommostCompressionType(CompressionType.NO_COMPRESSION)
                .setTableFormatConfig(new BlockBasedTableConfig()
                        .setBlockCache(cache)
                        .setBlockSize(4096)
                        .setFilterPolicy(bloom));
        writeOptions = new WriteOptions().setDisableWAL(true);
        db = RocksDB.open(options, path);
    }

    @Override
    public void put(byte[] key, byte[] value) throws Exception {
        db.put(writeOptions, key, value);
    }

    @Override
    public byte[] get(byte[] key) throws Exception {
        return db.get(key);
    }

    @Override
    public long multiGet(byte[][] keys) throws Exception {
        long bytes = 0;
        for (byte[] v : db.multiGetAsList(Arrays.asList(keys))) {
            bytes += v == null ? 0 : v.length;
        }
        return bytes;
    }

    @Override
    public void deleteRange(byte[] begin, byte[] end) throws Exception {
        db.deleteRange(writeOptions, begin, end);
    }

    @Override
    public void flushMemtable() throws Exception {
        try (FlushOptions fo = new FlushOptions().setWaitForFlush(true)) {
            db.flush(fo);
        }
    }

    @Override
    public void delete(byte[] key) throws Exception {
        db.delete(writeOptions, key);
    }

    @Override
    public long seekAndNext(byte[] key, int n) {
        long bytes = 0;
        try (RocksIterator it = db.newIterator()) {
            it.seek(key);
            for (int i = 0; i < n && it.isValid(); i++, it.next()) {
                bytes += it.key().length + it.value().length;
            }
        }
        return bytes;
    }

    @Override
    public long scanRange(byte[] from, byte[] to) {
        long bytes = 0;
        try (Slice upper = new Slice(to);
                ReadOptions bounded = new ReadOptions().setIterateUpperBound(upper);
                RocksIterator it = db.newIterator(bounded)) {
            for (it.seek(from); it.isValid(); it.next()) {
                bytes += it.key().length + it.value().length;
            }
        }
        return bytes;
    }

    @Override
    public void settle() throws Exception {
        try (FlushOptions fo = new FlushOptions().setWaitForFlush(true)) {
            db.flush(fo);
        }
        db.compactRange();
        RocksIdle.await(db);  // as Lethe's settle, which waits for its background work
    }

    @Override
    public void quiesce() throws Exception {
        RocksIdle.await(db);
    }

    @Override
    public void close() {
        db.close();
        writeOptions.close();
        options.close();
        bloom.close();
        cache.close();
    }
}
