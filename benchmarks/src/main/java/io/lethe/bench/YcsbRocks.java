package io.lethe.bench;

import static io.lethe.bench.DeleteHeavyYcsb.CACHE;
import static io.lethe.bench.DeleteHeavyYcsb.LEVEL1;
import static io.lethe.bench.DeleteHeavyYcsb.TARGET_FILE;
import static io.lethe.bench.DeleteHeavyYcsb.WRITE_BUFFER;

import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.BloomFilter;
import org.rocksdb.CompressionType;
import org.rocksdb.FlushOptions;
import org.rocksdb.HistogramType;
import org.rocksdb.LRUCache;
import org.rocksdb.LiveFileMetaData;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.TablePropertiesCollectorFactory;
import org.rocksdb.TickerType;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * RocksDB (rocksdbjni) under the delete-heavy YCSB workload, in one of the variants an expert would
 * try against tombstones that linger: {@code plain} (defaults), {@code ttl} and {@code periodic}
 * ({@code ttl} or {@code periodic_compaction_seconds} = D_th, whole seconds), {@code
 * deletion-collector} (the CompactOnDeletionCollector tuned to the workload's delete share).
 */
final class YcsbRocks implements YcsbEngine {
    static {
        RocksDB.loadLibrary();
    }

    static final List<String> VARIANTS = List.of("plain", "ttl", "periodic", "deletion-collector");

    private final LRUCache cache = new LRUCache(CACHE);
    private final BloomFilter bloom = new BloomFilter(10);
    private final org.rocksdb.Statistics stats = new org.rocksdb.Statistics();
    private final Options options;
    private final org.rocksdb.WriteOptions writeOptions = new org.rocksdb.WriteOptions().setDisableWAL(true);
    private final RocksDB db;

    YcsbRocks(Path dir, String variant, Duration threshold, int deletePercent) throws Exception {
        options = new Options().setCreateIfMissing(true).setWriteBufferSize(WRITE_BUFFER)
                .setMaxWriteBufferNumber(2).setMaxBytesForLevelBase(LEVEL1).setTargetFileSizeBase(TARGET_FILE)
                .setLevelCompactionDynamicLevelBytes(true) // its default, stated as Lethe's is
                .setCompressionType(CompressionType.NO_COMPRESSION)
                .setBottommostCompressionType(CompressionType.NO_COMPRESSION).setStatistics(stats)
                .setTableFormatConfig(new BlockBasedTableConfig().setBlockCache(cache).setBlockSize(4096)
                        .setFilterPolicy(bloom));
        long seconds = Math.max(1, threshold.toSeconds());
        switch (variant) {
            case "plain" -> { }
            case "ttl" -> options.setTtl(seconds);
            case "periodic" -> options.setPeriodicCompactionSeconds(seconds);
            case "deletion-collector" -> options.setTablePropertiesCollectorFactory(
                    List.of(TablePropertiesCollectorFactory.NewCompactOnDeletionCollectorFactory(128, 128,
                            deleteShareOfWrites(deletePercent))));
            default -> throw new IllegalArgumentException("unknown RocksDB variant " + variant);
        }
        db = RocksDB.open(options, dir.toString());
    }

    /**
     * The share of deletes among the entries the workload writes (half the operations write; {@code
     * deletePercent} of all are deletes): a file at least this dense in tombstones, about every other
     * fresh file, is marked for compaction. The collector's sliding window is off (trigger = window).
     */
    static double deleteShareOfWrites(int deletePercent) {
        return deletePercent / 50.0;
    }

    /** The variant's settings, for the report. */
    static String describe(String variant) {
        return switch (variant) {
            case "plain" -> "defaults";
            case "ttl" -> "ttl = D_th";
            case "periodic" -> "periodic_compaction_seconds = D_th";
            case "deletion-collector" -> String.format(Locale.ROOT, "CompactOnDeletionCollector(window 128,"
                    + " trigger 128, ratio = delete share of written entries: %.2f at 2 %%, %.2f at 5 %%,"
                    + " %.2f at 10 %%)",
                    deleteShareOfWrites(2), deleteShareOfWrites(5), deleteShareOfWrites(10));
            default -> throw new IllegalArgumentException(variant);
        };
    }

    @Override
    public void put(byte[] k, byte[] v) throws Exception {
        db.put(writeOptions, k, v);
    }

    @Override
    public byte[] get(byte[] k) throws Exception {
        return db.get(k);
    }

    @Override
    public void delete(byte[] k) throws Exception {
        db.delete(writeOptions, k);
    }

    /** Flushes and waits for the compactions it starts, as Lethe's flush does here. */
    @Override
    public void flush() throws Exception {
        try (FlushOptions fo = new FlushOptions().setWaitForFlush(true)) {
            db.flush(fo);
        }
        RocksIdle.await(db);
    }

    @Override
    public Measure measure(WriteClock clock) throws Exception {
        long now = System.nanoTime();
        if (db.getLatestSequenceNumber() != clock.writes()) {
            throw new IllegalStateException("RocksDB's sequence number " + db.getLatestSequenceNumber()
                    + " does not count the " + clock.writes() + " writes one by one: tombstone ages would be wrong");
        }
        long live = Long.parseLong(db.getProperty("rocksdb.live-sst-files-size"));
        long written = stats.getTickerCount(TickerType.FLUSH_WRITE_BYTES)
                + stats.getTickerCount(TickerType.COMPACT_WRITE_BYTES);
        long tombstones = Long.parseLong(db.getProperty("rocksdb.num-deletes-active-mem-table"))
                + Long.parseLong(db.getProperty("rocksdb.num-deletes-imm-mem-tables"));
        double maxAge = 0;
        List<FileTombstones> files = new ArrayList<>();
        for (LiveFileMetaData f : db.getLiveFilesMetaData()) {
            if (f.numDeletions() == 0) {
                continue;
            }
            tombstones += f.numDeletions();
            // Every tombstone of the file lies between its oldest and its newest entry.
            long atLeast = clock.ageMicros(f.largestSeqno(), now);
            long atMost = clock.ageMicros(f.smallestSeqno(), now);
            files.add(new FileTombstones(atLeast, atMost, f.numDeletions()));
            maxAge = Math.max(maxAge, atLeast / 1e6);
        }
        // A compaction job per compaction that rewrote data (trivial moves run none).
        long compactions = stats.getHistogramData(HistogramType.COMPACTION_TIME).getCount();
        return new Measure(live, written, compactions, stats.getTickerCount(TickerType.COMPACT_WRITE_BYTES),
                tombstones, maxAge, files);
    }

    @Override
    public void close() {
        db.close();
        writeOptions.close();
        options.close();
        stats.close();
        bloom.close();
        cache.close();
    }
}
