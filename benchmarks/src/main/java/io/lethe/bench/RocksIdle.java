package io.lethe.bench;

import org.rocksdb.RocksDB;

/** Waiting for RocksDB to settle, as Lethe's {@code waitForBackgroundWork} does. */
final class RocksIdle {
    private RocksIdle() {}

    /** Returns once no flush or compaction runs and none is pending. */
    static void await(RocksDB db) throws Exception {
        while (db.getLongProperty("rocksdb.num-running-compactions") > 0
                || db.getLongProperty("rocksdb.num-running-flushes") > 0
                || db.getLongProperty("rocksdb.compaction-pending") > 0) {
            Thread.sleep(10);
        }
    }
}
