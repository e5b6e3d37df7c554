package io.lethe.engine;

import static io.lethe.engine.LetheDbTest.b;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.NoSuchElementException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Misuse on purpose: every case must throw a Java exception and leave the JVM running. */
class MisuseTest {
    @TempDir Path dir;

    @Test
    void closedDatabaseThrowsIllegalStateForEveryCall() throws Exception {
        LetheDb db = LetheDb.open(dir.resolve("db").toString(), DbOptions.builder().build());
        ColumnFamilyHandle cf = db.defaultColumnFamily();
        db.close();
        db.close();  // idempotent
        assertTrue(db.isClosed());
        assertThrows(IllegalStateException.class, () -> db.get(cf, b("k")));
        assertThrows(IllegalStateException.class, () -> db.put(cf, b("k"), b("v")));
        assertThrows(IllegalStateException.class, () -> db.delete(cf, b("k")));
        assertThrows(IllegalStateException.class, () -> db.merge(cf, b("k"), b("v"), 1));
        assertThrows(IllegalStateException.class, () -> db.deleteRange(cf, b("a"), b("b")));
        assertThrows(IllegalStateException.class, () -> db.deleteByDeleteKey(cf, 1, 2));
        assertThrows(IllegalStateException.class, () -> db.advanceHorizon(cf, 1));
        assertThrows(IllegalStateException.class, () -> db.horizon(cf));
        assertThrows(IllegalStateException.class, () -> db.write(WriteOptions.DEFAULT, new WriteBatch().put(cf, b("k"), b("v"))));
        assertThrows(IllegalStateException.class, () -> db.newIterator(cf));
        assertThrows(IllegalStateException.class, db::getSnapshot);
        assertThrows(IllegalStateException.class, db::flush);
        assertThrows(IllegalStateException.class, db::compactAll);
        assertThrows(IllegalStateException.class, db::statistics);
        assertThrows(IllegalStateException.class, () -> db.checkpoint(dir.resolve("c").toString()));
        assertThrows(IllegalStateException.class, () -> db.beginCheckpoint(dir.resolve("c").toString()));
        assertThrows(IllegalStateException.class, () -> db.liveFiles(false));
        assertThrows(IllegalStateException.class, () -> db.createColumnFamily("x", ColumnFamilyOptions.DEFAULT));
        assertThrows(IllegalStateException.class, db::defaultColumnFamily);
    }

    @Test
    void closingTheDatabaseClosesIteratorsAndSnapshots() throws Exception {
        LetheDb db = LetheDb.open(dir.resolve("db").toString(), DbOptions.builder().build());
        ColumnFamilyHandle cf = db.defaultColumnFamily();
        db.put(cf, b("k"), b("v"));
        LetheIterator it = db.newIterator(cf);
        it.seekToFirst();
        Snapshot snap = db.getSnapshot();
        db.close();
        assertThrows(IllegalStateException.class, it::isValid);
        assertThrows(IllegalStateException.class, it::next);
        assertThrows(IllegalStateException.class, it::seekToFirst);
        assertThrows(IllegalStateException.class, it::key);
        it.close();  // harmless after the database closed it
        snap.close();
    }

    @Test
    void closingTheDatabaseAbandonsAPendingCheckpoint() throws Exception {
        LetheDb db = LetheDb.open(dir.resolve("db").toString(), DbOptions.builder().build());
        db.put(db.defaultColumnFamily(), b("k"), b("v"));
        PendingCheckpoint pending = db.beginCheckpoint(dir.resolve("c").toString());
        assertThrows(LetheException.class, () -> db.beginCheckpoint(dir.resolve("c").toString()));  // exists
        db.close();
        assertTrue(Files.notExists(dir.resolve("c")));
        assertThrows(IllegalStateException.class, pending::finish);
        assertThrows(IllegalStateException.class, pending::imageCount);
        assertThrows(IllegalStateException.class, () -> pending.writeImage(0));
        pending.close();  // harmless after the database closed it
    }

    @Test
    void closedIteratorAndUnpositionedIterator() throws Exception {
        try (LetheDb db = LetheDb.open(dir.resolve("db").toString(), DbOptions.builder().build())) {
            ColumnFamilyHandle cf = db.defaultColumnFamily();
            LetheIterator it = db.newIterator(cf);
            assertThrows(NoSuchElementException.class, it::key);
            it.seekToFirst();
            assertEquals(false, it.isValid());
            assertThrows(NoSuchElementException.class, it::next);
            it.close();
            it.close();
            assertThrows(IllegalStateException.class, it::seekToFirst);
            assertThrows(IllegalStateException.class, it::isValid);
            Snapshot s = db.getSnapshot();
            s.close();
            s.close();
            assertThrows(IllegalStateException.class, () -> db.get(ReadOptions.atSnapshot(s), cf, b("k")));
        }
    }

    @Test
    void nullArraysHugeKeysAndForeignHandles() throws Exception {
        try (LetheDb db = LetheDb.open(dir.resolve("a").toString(), DbOptions.builder().build());
                LetheDb other = LetheDb.open(dir.resolve("b").toString(), DbOptions.builder().build())) {
            ColumnFamilyHandle cf = db.defaultColumnFamily();
            assertThrows(NullPointerException.class, () -> db.get(cf, null));
            assertThrows(NullPointerException.class, () -> db.put(cf, null, b("v")));
            assertThrows(NullPointerException.class, () -> db.put(cf, b("k"), null));
            assertThrows(NullPointerException.class, () -> db.put(null, b("k"), b("v")));
            assertThrows(NullPointerException.class, () -> db.newIterator(cf).seek(null));
            byte[] huge = new byte[LetheDb.MAX_KEY_BYTES + 1];
            assertThrows(IllegalArgumentException.class, () -> db.put(cf, huge, b("v")));
            assertThrows(IllegalArgumentException.class, () -> db.get(cf, huge));
            ColumnFamilyHandle foreign = other.defaultColumnFamily();
            assertThrows(IllegalArgumentException.class, () -> db.put(foreign, b("k"), b("v")));
            assertThrows(IllegalArgumentException.class, () -> db.get(ReadOptions.atSnapshot(other.getSnapshot()), cf, b("k")));
            WriteBatch mixed = new WriteBatch().put(cf, b("k"), b("v"));
            assertThrows(IllegalArgumentException.class, () -> mixed.put(foreign, b("k"), b("v")));
            assertThrows(IllegalArgumentException.class, () -> other.write(WriteOptions.DEFAULT, mixed));
            assertThrows(IllegalArgumentException.class, () -> ColumnFamilyOptions.builder().pagesPerTile(-1));
            assertThrows(IllegalArgumentException.class, () -> DbOptions.builder().writeBufferSizeBytes(1));
            db.put(cf, b("still"), b("alive"));
            assertEquals("alive", LetheDbTest.s(db.get(cf, b("still"))));
        }
    }

    @Test
    void badPathsAndCorruptFilesGiveLetheException() throws Exception {
        Path file = Files.writeString(dir.resolve("not-a-dir"), "x");
        LetheException e = assertThrows(LetheException.class,
                () -> LetheDb.open(file.toString(), DbOptions.builder().build()));
        assertEquals(StatusCode.IO_ERROR, e.code());
        Path missing = dir.resolve("missing");
        e = assertThrows(LetheException.class,
                () -> LetheDb.open(missing.toString(), DbOptions.builder().createIfMissing(false).build()));
        assertEquals(StatusCode.INVALID_ARGUMENT, e.code());

        Path path = dir.resolve("corrupt");
        try (LetheDb db = LetheDb.open(path.toString(), DbOptions.builder().build())) {
            db.put(db.defaultColumnFamily(), b("k"), b("v"));
            db.flush();
        }
        Files.writeString(path.resolve("CURRENT"), "MANIFEST-999999\n");
        e = assertThrows(LetheException.class, () -> LetheDb.open(path.toString(), DbOptions.builder().build()));
        assertEquals(StatusCode.NOT_FOUND, e.code());
        Files.writeString(path.resolve("CURRENT"), "garbage");
        e = assertThrows(LetheException.class, () -> LetheDb.open(path.toString(), DbOptions.builder().build()));
        assertEquals(StatusCode.CORRUPTION, e.code());
    }
}
