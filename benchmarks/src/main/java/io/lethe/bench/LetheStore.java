package io.lethe.bench;

import io.lethe.engine.ColumnFamilyHandle;
import io.lethe.engine.ColumnFamilyOptions;
import io.lethe.engine.Compression;
import io.lethe.engine.DbOptions;
import io.lethe.engine.LetheDb;
import io.lethe.engine.LetheIterator;
import io.lethe.engine.MultiGetBatch;
import io.lethe.engine.ReadOptions;
import io.lethe.engine.WriteOptions;

/** Lethe with the benchmark's memory budget, no WAL (as in Flink). */
final class LetheStore implements KeyValueStore {
    private final LetheDb db;
    private final ColumnFamilyHandle cf;
    /** Each thread's batch, reused: its buffers are the API's to keep. */
    private final ThreadLocal<MultiGetBatch> batches = ThreadLocal.withInitial(() -> new MultiGetBatch(128));

    /**
     * @param multiGetHelpers threads that help each multiGet beside the caller (Lethe's default is
     *     1; 0 keeps a batch on the calling thread, as rocksdbjni's {@code multiGetAsList} does)
     */
    LetheStore(String path, long writeBufferBytes, long cacheBytes, int multiGetHelpers) throws Exception {
        db = LetheDb.open(path, DbOptions.builder()
                .useWal(false)
                .writeBufferSizeBytes(writeBufferBytes)
                .pageCacheBytes(cacheBytes)
                .multiGetThreads(multiGetHelpers)
                .defaultColumnFamilyOptions(ColumnFamilyOptions.builder().pageSizeBytes(4096).bloomBitsPerKey(10)
                        .compression(Compression.NONE).build())
                .build());
        cf = db.defaultColumnFamily();
    }

    @Override
    public void put(byte[] key, byte[] value) throws Exception {
        db.put(WriteOptions.NO_WAL, cf, key, value, LetheDb.MAX_DELETE_KEY);
    }

    @Override
    public byte[] get(byte[] key) throws Exception {
        return db.get(cf, key);
    }

    @Override
    public long multiGet(byte[][] keys) throws Exception {
        MultiGetBatch batch = batches.get().clear();
        for (byte[] k : keys) {
            batch.add(k);
        }
        db.multiGet(cf, batch);
        long bytes = 0;
        for (int i = 0; i < keys.length; i++) {
            bytes += Math.max(0, batch.valueLength(i));
        }
        return bytes;
    }

    @Override
    public void deleteRange(byte[] begin, byte[] end) throws Exception {
        db.deleteRange(cf, begin, end);
    }

    @Override
    public void flushMemtable() throws Exception {
        db.flush();
    }

    @Override
    public void delete(byte[] key) throws Exception {
        db.delete(WriteOptions.NO_WAL, cf, key);
    }

    @Override
    public long seekAndNext(byte[] key, int n) throws Exception {
        long bytes = 0;
        try (LetheIterator it = db.newIterator(cf)) {
            it.seek(key);
            for (int i = 0; i < n && it.isValid(); i++, it.next()) {
                bytes += it.key().length + it.value().length;
            }
        }
        return bytes;
    }

    @Override
    public long scanRange(byte[] from, byte[] to) throws Exception {
        long bytes = 0;
        try (LetheIterator it = db.newIterator(new ReadOptions(null, null, to, true), cf)) {
            for (it.seek(from); it.isValid(); it.next()) {
                bytes += it.key().length + it.value().length;
            }
        }
        return bytes;
    }

    @Override
    public void settle() throws Exception {
        db.flush();
        db.compactAll();
        db.waitForBackgroundWork();
    }

    @Override
    public void quiesce() throws Exception {
        db.waitForBackgroundWork();
    }

    @Override
    public void close() {
        db.close();
    }
}
