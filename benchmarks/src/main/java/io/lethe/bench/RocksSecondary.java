package io.lethe.bench;

import org.rocksdb.AbstractCompactionFilterFactory;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.BloomFilter;
import org.rocksdb.Checkpoint;
import org.rocksdb.CompactRangeOptions;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.CompressionType;
import org.rocksdb.DBOptions;
import org.rocksdb.FlushOptions;
import org.rocksdb.LRUCache;
import org.rocksdb.RocksDB;
import org.rocksdb.TableProperties;
import org.rocksdb.TickerType;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * RocksDB's side of {@link SecondaryDeleteBench}: one database, its statistics, and the ways RocksDB can
 * delete by a key it does not sort on. Compiled against rocksdbjni; {@link FrocksFilterRun} runs the same
 * code on Flink's frocksdbjni (same API, plus Flink's TTL compaction filter).
 */
final class RocksSecondary implements AutoCloseable {
    static {
        RocksDB.loadLibrary();
    }

    final LRUCache cache = new LRUCache(SecondaryDeleteBench.CACHE);
    final BloomFilter bloom = new BloomFilter(10);
    final org.rocksdb.Statistics stats = new org.rocksdb.Statistics();
    final DBOptions dbOptions;
    final ColumnFamilyOptions cfOptions;
    final WriteOptions noWal = new WriteOptions().setDisableWAL(true);
    final List<ColumnFamilyHandle> handles = new ArrayList<>();
    final RocksDB db;

    /**
     * Opens (creating) {@code dir}; {@code filters} may be null. Column family options carry the filter
     * factory, as in Flink's RocksDB backend (frocksdbjni 8.10 crashes when it is set on {@code Options}).
     */
    RocksSecondary(Path dir, AbstractCompactionFilterFactory<?> filters) throws Exception {
        java.nio.file.Files.createDirectories(dir.getParent());
        dbOptions = new DBOptions().setCreateIfMissing(true).setStatistics(stats);
        cfOptions = new ColumnFamilyOptions().setWriteBufferSize(SecondaryDeleteBench.WRITE_BUFFER)
                .setMaxWriteBufferNumber(2).setMaxBytesForLevelBase(SecondaryDeleteBench.LEVEL1)
                .setTargetFileSizeBase(SecondaryDeleteBench.TARGET_FILE)
                .setCompressionType(CompressionType.NO_COMPRESSION)
                .setBottommostCompressionType(CompressionType.NO_COMPRESSION)
                .setTableFormatConfig(new BlockBasedTableConfig().setBlockCache(cache).setBlockSize(4096)
                        .setFilterPolicy(bloom));
        if (filters != null) {
            cfOptions.setCompactionFilterFactory(filters);
        }
        db = RocksDB.open(dbOptions, dir.toString(),
                List.of(new ColumnFamilyDescriptor(RocksDB.DEFAULT_COLUMN_FAMILY, cfOptions)), handles);
    }

    /** Loads the data set and settles it into a compacted tree. */
    void load(SecondaryDeleteBench.DataSet data) throws Exception {
        try (WriteBatch batch = new WriteBatch()) {
            for (int n = 0; n < data.n; n++) {
                int i = data.order[n];
                batch.put(data.key(i), data.value(i));
                if (batch.count() == 1000) {
                    db.write(noWal, batch);
                    batch.clear();
                }
            }
            db.write(noWal, batch);
        }
        flush();
        compactAll();
    }

    void flush() throws Exception {
        try (FlushOptions fo = new FlushOptions().setWaitForFlush(true)) {
            db.flush(fo);
        }
    }

    /**
     * A full compaction: every level down to the bottom, which is rewritten too unless it was just
     * written by this compaction ({@code kForceOptimized}, RocksDB's cheapest way to make sure every
     * file was filtered).
     */
    void compactAll() throws Exception {
        try (CompactRangeOptions o = new CompactRangeOptions()
                .setBottommostLevelCompaction(CompactRangeOptions.BottommostLevelCompaction.kForceOptimized)) {
            db.compactRange(handles.get(0), null, null, o);
        }
    }

    void checkpoint(Path dir) throws Exception {
        try (Checkpoint c = Checkpoint.create(db)) {
            c.createCheckpoint(dir.toString());
        }
    }

    long liveBytes() throws Exception {
        return Long.parseLong(db.getProperty("rocksdb.live-sst-files-size"));
    }

    long bytesRead() {
        return stats.getTickerCount(TickerType.COMPACT_READ_BYTES);
    }

    long bytesWritten() {
        return stats.getTickerCount(TickerType.FLUSH_WRITE_BYTES) + stats.getTickerCount(TickerType.COMPACT_WRITE_BYTES);
    }

    /** Entries and tombstones in files, from table properties. */
    long[] entriesAndTombstones() throws Exception {
        long entries = 0;
        long tombstones = 0;
        for (TableProperties p : db.getPropertiesOfAllTables().values()) {
            entries += p.getNumEntries() - p.getNumDeletions();
            tombstones += p.getNumDeletions() + p.getNumRangeDeletions();
        }
        return new long[] {entries, tombstones};
    }

    /**
     * The scan alternative: read every entry, delete those whose delete key (the value's first 8 bytes) is
     * below {@code cut}, then compact everything so the data is physically gone. Returns the bytes the scan
     * read (every data block once: the live table bytes).
     */
    long scanDeleteCompact(long cut) throws Exception {
        long scanned = liveBytes();
        try (org.rocksdb.ReadOptions ro = new org.rocksdb.ReadOptions().setFillCache(false);
                org.rocksdb.RocksIterator it = db.newIterator(ro);
                WriteBatch batch = new WriteBatch()) {
            for (it.seekToFirst(); it.isValid(); it.next()) {
                if (SecondaryDeleteBench.deleteKeyOf(it.value()) < cut) {
                    batch.delete(it.key());
                    if (batch.count() == 1000) {
                        db.write(noWal, batch);
                        batch.clear();
                    }
                }
            }
            it.status();
            db.write(noWal, batch);
        }
        flush();
        compactAll();
        return scanned;
    }

    /**
     * The best case with correlated delete keys, as RocksDB's documentation advises for a key range:
     * DeleteFilesInRange drops the files wholly inside it, one range tombstone covers the rest, and a
     * compaction of that range alone (its last level included, so the tombstone is dropped) removes what
     * the tombstone covers.
     */
    void deleteRangeCompact(byte[] begin, byte[] end) throws Exception {
        db.deleteFilesInRanges(handles.get(0), List.of(begin, end), false);
        db.deleteRange(noWal, begin, end);
        flush();
        try (CompactRangeOptions o = new CompactRangeOptions()
                .setBottommostLevelCompaction(CompactRangeOptions.BottommostLevelCompaction.kForceOptimized)) {
            db.compactRange(handles.get(0), begin, end, o);
        }
    }

    /** Mean microseconds per point lookup of the given keys. */
    double lookupMicros(byte[][] keys) throws Exception {
        long t0 = System.nanoTime();
        for (byte[] k : keys) {
            db.get(k);
        }
        return (System.nanoTime() - t0) / 1e3 / keys.length;
    }

    @Override
    public void close() {
        for (ColumnFamilyHandle h : handles) {
            h.close();
        }
        db.close();
        noWal.close();
        cfOptions.close();
        dbOptions.close();
        stats.close();
        bloom.close();
        cache.close();
    }
}
