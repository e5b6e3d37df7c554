package io.lethe.engine;

import static io.lethe.engine.LetheDbTest.b;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class HeapUsageTest {
    @TempDir Path dir;

    /** Pages read into a page cache are allocated from the heap: what it has in use grows by about as much. */
    @Test
    void pagesInTheCacheAreHeapInUse() throws Exception {
        HeapUsage before = HeapUsage.now();
        assertTrue(before.inUseBytes() > 0 && before.inUseBytes() <= before.mappedBytes(), before.toString());
        assertTrue(before.freeBytes() >= 0 && before.freeBytes() <= before.mappedBytes(), before.toString());
        DbOptions options = DbOptions.builder().pageCacheBytes(64L << 20).build();
        try (LetheDb db = LetheDb.open(dir.toString(), options)) {
            byte[] value = new byte[400];
            new Random(1).nextBytes(value); // incompressible: each page holds its bytes decoded
            for (int i = 0; i < 100_000; i++) {
                db.put(db.defaultColumnFamily(), b(String.format("k%08d", i)), value);
            }
            db.flush();
            db.compactAll();
            HeapUsage written = HeapUsage.now();
            try (LetheIterator it = db.newIterator(db.defaultColumnFamily())) {
                for (it.seekToFirst(); it.isValid(); it.next()) {
                    // every page enters the cache
                }
            }
            long cached = db.statistics().get(Ticker.MEMORY_PAGE_CACHE_BYTES);
            HeapUsage read = HeapUsage.now();
            assertTrue(cached > (32L << 20), "page cache " + cached);
            assertTrue(read.inUseBytes() - written.inUseBytes() > cached / 2,
                    "in use " + written + " -> " + read + " with " + cached + " bytes of pages cached");
        }
    }
}
