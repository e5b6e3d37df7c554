package io.lethe.engine;

import static io.lethe.engine.LetheDbTest.b;
import static io.lethe.engine.LetheDbTest.s;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MemoryBudgetTest {
    @TempDir Path dir;

    private static DbOptions on(MemoryBudget budget) {
        return DbOptions.builder()
                .memoryBudget(budget)
                .writeBufferSizeBytes(1L << 30) // only the budget flushes
                .defaultColumnFamilyOptions(ColumnFamilyOptions.builder().pageSizeBytes(1024).build())
                .build();
    }

    /** Two databases on one budget: each reads its own data, the budget flushes both, counts all. */
    @Test
    void databasesShareOneBudget() throws Exception {
        try (MemoryBudget budget = MemoryBudget.create(4L << 20, 0.25);
                LetheDb a = LetheDb.open(dir.resolve("a").toString(), on(budget));
                LetheDb c = LetheDb.open(dir.resolve("c").toString(), on(budget))) {
            byte[] value = new byte[100];
            for (int i = 0; i < 30_000; i++) {
                value[0] = 'a';
                a.put(a.defaultColumnFamily(), b("k" + i), value);
                value[0] = 'c';
                c.put(c.defaultColumnFamily(), b("k" + i), value);
            }
            for (int i = 0; i < 30_000; i += 101) {
                assertEquals('a', a.get(a.defaultColumnFamily(), b("k" + i))[0]);
                assertEquals('c', c.get(c.defaultColumnFamily(), b("k" + i))[0]);
            }
            // About 3.4 MiB each into 1 MiB of write buffers.
            assertTrue(a.statistics().get(Ticker.FLUSHES) >= 2, "flushes of a");
            assertTrue(c.statistics().get(Ticker.FLUSHES) >= 2, "flushes of c");
            MemoryBudget.Usage u = budget.usage();
            assertEquals(4L << 20, u.capacity());
            assertTrue(u.writeBuffers() <= 2L << 20, u.toString());
            assertTrue(u.tableReaders() > 0 && u.pageCache() > 0, u.toString());
            assertEquals(u.pageCache(), a.statistics().get(Ticker.MEMORY_PAGE_CACHE_BYTES), "one cache");
        }
    }

    /** The databases keep the budget: closing the Java handle first changes nothing for them. */
    @Test
    void aDatabaseOutlivesTheBudgetHandle() throws Exception {
        MemoryBudget budget = MemoryBudget.create(2L << 20, 0.5);
        try (LetheDb db = LetheDb.open(dir.resolve("db").toString(), on(budget))) {
            budget.close();
            budget.close(); // idempotent
            db.put(db.defaultColumnFamily(), b("k"), b("v"));
            db.flush();
            assertEquals("v", s(db.get(db.defaultColumnFamily(), b("k"))));
            assertEquals(2L << 20, db.statistics().get(Ticker.MEMORY_BUDGET_BYTES));
        }
        assertThrows(IllegalStateException.class, budget::usage);
        assertThrows(IllegalStateException.class, () -> LetheDb.open(dir.resolve("other").toString(), on(budget)));
    }

    @Test
    void badArgumentsAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> MemoryBudget.create((64L << 10) - 1, 0.5));
        assertThrows(IllegalArgumentException.class, () -> MemoryBudget.create(1L << 20, 0));
        assertThrows(IllegalArgumentException.class, () -> MemoryBudget.create(1L << 20, 1));
        assertThrows(IllegalArgumentException.class, () -> MemoryBudget.create(1L << 20, Double.NaN));
        assertThrows(IllegalArgumentException.class, () -> DbOptions.builder().multiGetThreads(65));
        assertThrows(IllegalArgumentException.class, () -> DbOptions.builder().heapTrimIntervalMillis(-1));
        assertThrows(IllegalArgumentException.class, () -> DbOptions.builder().heapTrimIntervalMillis(86_400_001));
    }

    @Test
    void aBudgetWithBoundTablesServesADatabase() throws Exception {
        try (MemoryBudget budget = MemoryBudget.create(1L << 20, 0.5, true);
                LetheDb db = LetheDb.open(dir.resolve("db").toString(), on(budget))) {
            for (int i = 0; i < 5000; i++) {
                db.put(db.defaultColumnFamily(), b("k" + i), b("v" + i));
            }
            db.flush();
            assertEquals("v4321", s(db.get(db.defaultColumnFamily(), b("k4321"))));
            MemoryBudget.Usage u = budget.usage();
            assertTrue(u.tableReaders() > 0 && u.pinnedTableReaders() <= (256L << 10), u.toString());
        }
    }
}
