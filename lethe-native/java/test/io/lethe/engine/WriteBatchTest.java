package io.lethe.engine;

import static io.lethe.engine.LetheDbTest.b;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class WriteBatchTest {
    @TempDir Path dir;

    @Test
    void encodingMatchesTheEngineGoldenBytes() throws Exception {
        try (LetheDb db = LetheDb.open(dir.resolve("db").toString(), DbOptions.builder().build())) {
            ColumnFamilyHandle cf0 = db.defaultColumnFamily();
            db.createColumnFamily("one", ColumnFamilyOptions.DEFAULT);
            ColumnFamilyHandle cf2 = db.createColumnFamily("two", ColumnFamilyOptions.DEFAULT);
            assertEquals(2, cf2.id());
            WriteBatch batch = new WriteBatch().put(cf0, b("k"), b("v"), 7).delete(cf2, b("x"));
            // The same bytes as lethe-native/src/db/write_batch_test.cc GoldenEncoding.
            String expected = "0000000000000000" + "02000000" + "01" + "00" + "016b" + "0176" + "0700000000000000"
                    + "00" + "02" + "0178";
            assertEquals(expected, HexFormat.of().formatHex(batch.data(), 0, batch.sizeInBytes()));
            db.write(WriteOptions.DEFAULT, batch);
            assertEquals("v", LetheDbTest.s(db.get(cf0, b("k"))));
        }
    }

    @Test
    void largeBatchesGrowAndClearResets() throws Exception {
        try (LetheDb db = LetheDb.open(dir.resolve("db").toString(), DbOptions.builder().build())) {
            ColumnFamilyHandle cf = db.defaultColumnFamily();
            WriteBatch batch = new WriteBatch(16);
            for (int i = 0; i < 10_000; i++) {
                batch.put(cf, b("key" + i), new byte[200], i).merge(cf, b("list"), b(Integer.toString(i % 3)), i);
            }
            assertEquals(20_000, batch.count());
            db.write(WriteOptions.DEFAULT, batch);
            assertEquals(200, db.get(cf, b("key9999")).length);
            batch.clear();
            assertEquals(0, batch.count());
            assertEquals(WriteBatch.HEADER_SIZE, batch.sizeInBytes());
        }
    }
}
