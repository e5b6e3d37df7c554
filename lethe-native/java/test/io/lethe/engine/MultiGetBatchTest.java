package io.lethe.engine;

import static io.lethe.engine.LetheDbTest.b;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Path;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MultiGetBatchTest {
    @TempDir Path dir;
    LetheDb db;
    ColumnFamilyHandle cf;

    @BeforeEach
    void open() throws Exception {
        db = LetheDb.open(dir.resolve("db").toString(), LetheDbTest.smallOptions());
        cf = db.defaultColumnFamily();
    }

    @AfterEach
    void close() {
        db.close();
    }

    /** Random keys in random order, some absent, some repeated, values of every size: as get says. */
    @Test
    void aBatchAnswersAsGetDoesAcrossMemtableAndFiles() throws Exception {
        SplittableRandom random = new SplittableRandom(5);
        for (int i = 0; i < 3000; i += 2) {
            byte[] v = new byte[random.nextInt(300)];
            random.nextBytes(v);
            db.put(WriteOptions.DEFAULT, cf, b("k" + i), v, i);
            if (i == 2000) {
                db.flush();
            }
        }
        db.delete(WriteOptions.DEFAULT, cf, b("k10"));
        MultiGetBatch batch = new MultiGetBatch(4);  // grows
        for (int round = 0; round < 5; round++) {
            batch.clear();
            int n = 1 + random.nextInt(200);
            byte[][] keys = new byte[n][];
            for (int i = 0; i < n; i++) {
                keys[i] = i > 0 && random.nextInt(6) == 0 ? keys[random.nextInt(i)] : b("k" + random.nextInt(3100));
                batch.add(keys[i]);
            }
            db.multiGet(cf, batch);
            assertEquals(n, batch.size());
            for (int i = 0; i < n; i++) {
                long[] dk = new long[1];
                byte[] expected = db.get(ReadOptions.DEFAULT, cf, keys[i], dk);
                assertArrayEquals(expected, batch.value(i), "key " + new String(keys[i], UTF_8));
                assertEquals(expected != null, batch.found(i));
                if (expected != null) {
                    assertEquals(dk[0], batch.deleteKey(i));
                    byte[] copy = new byte[expected.length + 3];
                    assertEquals(expected.length, batch.copyValue(i, copy, 3));
                }
            }
        }
    }

    @Test
    void aBatchReadsItsSnapshot() throws Exception {
        db.put(cf, b("a"), b("old"));
        Snapshot snap = db.getSnapshot();
        db.put(cf, b("a"), b("new"));
        db.put(cf, b("b"), b("later"));
        MultiGetBatch batch = new MultiGetBatch().add(b("a")).add(b("b"));
        db.multiGet(ReadOptions.atSnapshot(snap), cf, batch);
        assertArrayEquals(b("old"), batch.value(0));
        assertNull(batch.value(1));
        assertEquals(-1, batch.valueLength(1));
        snap.close();
    }

    @Test
    void resultsNeedALookupAndMisuseIsRefused() throws Exception {
        MultiGetBatch batch = new MultiGetBatch().add(b("a"));
        assertThrows(IllegalStateException.class, () -> batch.found(0));
        db.multiGet(cf, batch);
        assertFalse(batch.found(0));
        assertThrows(IndexOutOfBoundsException.class, () -> batch.found(1));
        batch.add(b("b"));
        assertThrows(IllegalStateException.class, () -> batch.found(0), "changed since the lookup");
        assertThrows(IndexOutOfBoundsException.class, () -> batch.add(b("x"), 1, 5));
        db.multiGet(cf, batch.clear());
        assertEquals(0, batch.size());
        ColumnFamilyHandle other = db.createColumnFamily("other", ColumnFamilyOptions.builder().build());
        db.dropColumnFamily(other);
        assertThrows(IllegalStateException.class, () -> db.multiGet(other, new MultiGetBatch().add(b("a"))));
        db.close();
        assertThrows(IllegalStateException.class, () -> db.multiGet(cf, new MultiGetBatch().add(b("a"))));
    }
}
