package io.lethe.engine;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LetheDbTest {
    @TempDir Path dir;
    LetheDb db;
    ColumnFamilyHandle cf;

    static byte[] b(String s) {
        return s.getBytes(UTF_8);
    }

    static String s(byte[] b) {
        return b == null ? null : new String(b, UTF_8);
    }

    static DbOptions smallOptions() {
        return DbOptions.builder()
                .writeBufferSizeBytes(64 << 10)
                .defaultColumnFamilyOptions(ColumnFamilyOptions.builder()
                        .pageSizeBytes(512).pagesPerTile(4).level1Bytes(128 << 10).targetFileSizeBytes(32 << 10).build())
                .build();
    }

    @BeforeEach
    void open() throws Exception {
        db = LetheDb.open(dir.resolve("db").toString(), smallOptions());
        cf = db.defaultColumnFamily();
    }

    @AfterEach
    void close() {
        db.close();
    }

    @Test
    void putGetDeleteAndMissingKeyIsNull() throws Exception {
        db.put(cf, b("a"), b("1"));
        db.put(cf, b("b"), b("2"), 77);
        assertEquals("1", s(db.get(cf, b("a"))));
        long[] dk = new long[1];
        assertEquals("2", s(db.get(ReadOptions.DEFAULT, cf, b("b"), dk)));
        assertEquals(77, dk[0]);
        db.delete(cf, b("a"));
        assertNull(db.get(cf, b("a")));
        assertNull(db.get(cf, b("never")));
        db.flush();
        assertEquals("2", s(db.get(cf, b("b"))));
        assertNull(db.get(cf, b("a")));
    }

    @Test
    void aLookupByDeleteKeyFindsTheKeysWrittenWithItAndNoDeletedOne() throws Exception {
        db.put(cf, b("w1"), b("one"), 1);
        db.put(cf, b("w2"), b("two"), 2);
        db.flush();
        db.put(cf, b("w3"), b("three"), 3);
        db.delete(cf, b("w1"));
        db.flush();
        assertEquals("two", s(db.getWithDeleteKey(cf, b("w2"), 2)));
        assertEquals("three", s(db.getWithDeleteKey(cf, b("w3"), 3)));
        assertNull(db.getWithDeleteKey(cf, b("w1"), 1), "the tombstone's file is read");
        assertNull(db.getWithDeleteKey(cf, b("w4"), 4));
    }

    @Test
    void emptyKeysAndValuesAreValid() throws Exception {
        db.put(cf, new byte[0], new byte[0]);
        assertArrayEquals(new byte[0], db.get(cf, new byte[0]));
    }

    @Test
    void mergeAppendsAndDeleteRangeRemoves() throws Exception {
        db.merge(cf, b("list"), b("x"), LetheDb.MAX_DELETE_KEY);
        db.merge(cf, b("list"), b("y"), LetheDb.MAX_DELETE_KEY);
        assertEquals("x,y", s(db.get(cf, b("list"))));
        for (int i = 0; i < 10; i++) {
            db.put(cf, b("k" + i), b("v" + i));
        }
        db.deleteRange(cf, b("k2"), b("k7"));
        assertNull(db.get(cf, b("k2")));
        assertNull(db.get(cf, b("k6")));
        assertEquals("v7", s(db.get(cf, b("k7"))));
        assertThrows(IllegalArgumentException.class, () -> db.deleteRange(cf, b("z"), b("a")));
    }

    @Test
    void writeBatchIsAtomicAcrossColumnFamilies() throws Exception {
        ColumnFamilyHandle other = db.createColumnFamily("other", ColumnFamilyOptions.DEFAULT);
        WriteBatch batch = new WriteBatch().put(cf, b("k"), b("v")).put(other, b("k"), b("o")).delete(cf, b("gone"));
        assertEquals(3, batch.count());
        db.write(WriteOptions.DEFAULT, batch);
        assertEquals("v", s(db.get(cf, b("k"))));
        assertEquals("o", s(db.get(other, b("k"))));
    }

    @Test
    void snapshotsSeeThePast() throws Exception {
        db.put(cf, b("k"), b("old"));
        try (Snapshot snap = db.getSnapshot()) {
            db.put(cf, b("k"), b("new"));
            db.compactAll();
            assertEquals("old", s(db.get(ReadOptions.atSnapshot(snap), cf, b("k"))));
            assertEquals("new", s(db.get(cf, b("k"))));
            try (LetheIterator it = db.newIterator(ReadOptions.atSnapshot(snap), cf)) {
                it.seekToFirst();
                assertTrue(it.isValid());
                assertEquals("old", s(it.value()));
            }
        }
    }

    @Test
    void iteratorMatchesModelAcrossBatchesAndLargeValues() throws Exception {
        TreeMap<String, String> model = new TreeMap<>();
        for (int i = 0; i < 5000; i++) {
            String k = String.format("key%05d", (i * 7919) % 5000);
            String v = "v" + i + (i % 1000 == 0 ? "x".repeat(100_000) : "");
            db.put(cf, b(k), b(v), i);
            model.put(k, v);
        }
        db.flush();
        List<String> seen = new ArrayList<>();
        try (LetheIterator it = db.newIterator(cf)) {
            for (it.seekToFirst(); it.isValid(); it.next()) {
                String k = s(it.key());
                assertEquals(model.get(k), s(it.value()), k);
                seen.add(k);
            }
            assertEquals(new ArrayList<>(model.keySet()), seen);
            it.seek(b("key02500"));
            assertTrue(it.isValid());
            assertEquals("key02500", s(it.key()));
            assertEquals(0, it.compareKeyTo(b("key02500")));
            assertTrue(it.keyStartsWith(b("key025")));
        }
        ReadOptions bounded = ReadOptions.bounded(b("key00100"), b("key00103"));
        try (LetheIterator it = db.newIterator(bounded, cf)) {
            List<String> keys = new ArrayList<>();
            for (it.seekToFirst(); it.isValid(); it.next()) {
                keys.add(s(it.key()));
            }
            assertEquals(List.of("key00100", "key00101", "key00102"), keys);
        }
    }

    /**
     * Iterators opened one after another on a thread share their buffers (a closed one hands its buffer
     * to the next), nested ones and one whose buffer grew for a large entry included: every iterator
     * reads exactly its own entries, and a closed one reads nothing.
     */
    @Test
    void iteratorsOpenedOneAfterAnotherReadTheirOwnEntries() throws Exception {
        TreeMap<String, String> model = new TreeMap<>();
        for (int i = 0; i < 400; i++) {
            String v = "v" + i + (i % 97 == 0 ? "z".repeat(300_000 + i) : "");
            db.put(cf, b(String.format("k%04d", i)), b(v));
            model.put(String.format("k%04d", i), v);
        }
        for (int round = 0; round < 40; round++) {
            String from = String.format("k%04d", round * 10);
            LetheIterator outer = db.newIterator(cf);
            outer.seek(b(from));
            LetheIterator closed = db.newIterator(cf);
            closed.seekToFirst();
            closed.close();
            try (LetheIterator inner = db.newIterator(cf)) {
                inner.seekToLast();
                assertEquals(model.lastKey(), s(inner.key()));
                assertEquals(model.lastEntry().getValue(), s(inner.value()));
            }
            List<String> tail = new ArrayList<>(model.tailMap(from).values());
            List<String> expected = tail.subList(0, Math.min(12, tail.size()));
            List<String> values = new ArrayList<>();
            for (; outer.isValid() && values.size() < 12; outer.next()) {
                values.add(s(outer.value()));
            }
            outer.close();
            assertEquals(expected, values, "from " + from);
            assertThrows(IllegalStateException.class, closed::isValid);
            assertThrows(IllegalStateException.class, outer::key);
        }
    }

    @Test
    void iteratorGoesBackwardAndTurnsAroundAsTheModel() throws Exception {
        TreeMap<String, String> model = new TreeMap<>();
        Random rnd = new Random(7);
        for (int i = 0; i < 3000; i++) {
            String k = String.format("key%05d", rnd.nextInt(4000));
            String v = "v" + i + (i % 700 == 0 ? "y".repeat(60_000) : "");
            db.put(cf, b(k), b(v), i);
            model.put(k, v);
            if (i == 1500) {
                db.flush();
            }
        }
        db.deleteRange(cf, b("key01000"), b("key01400"));
        model.subMap("key01000", "key01400").clear();
        try (LetheIterator it = db.newIterator(cf)) {
            List<String> backward = new ArrayList<>();
            for (it.seekToLast(); it.isValid(); it.prev()) {
                String k = s(it.key());
                assertEquals(model.get(k), s(it.value()), k);
                backward.add(k);
            }
            assertEquals(new ArrayList<>(model.descendingKeySet()), backward);
            // Random walks from random targets, changing direction at random.
            for (int walk = 0; walk < 50; walk++) {
                String target = String.format("key%05d", rnd.nextInt(4100));
                it.seekForPrev(b(target));
                String want = model.floorKey(target);
                for (int step = 0; step < 40 && want != null; step++) {
                    assertTrue(it.isValid(), "walk " + walk + " step " + step);
                    assertEquals(want, s(it.key()), "walk " + walk + " step " + step);
                    boolean forward = rnd.nextBoolean();
                    if (forward) {
                        it.next();
                        want = model.higherKey(want);
                    } else {
                        it.prev();
                        want = model.lowerKey(want);
                    }
                }
                if (want == null) {
                    assertFalse(it.isValid(), "walk " + walk);
                }
            }
        }
        ReadOptions bounded = ReadOptions.bounded(b("key00100"), b("key00300"));
        try (LetheIterator it = db.newIterator(bounded, cf)) {
            List<String> keys = new ArrayList<>();
            for (it.seekToLast(); it.isValid(); it.prev()) {
                keys.add(s(it.key()));
            }
            assertEquals(new ArrayList<>(model.subMap("key00100", true, "key00300", false).descendingKeySet()), keys);
            it.seekForPrev(b("key99999"));
            assertEquals(model.lowerKey("key00300"), s(it.key()));
            it.seekForPrev(b("key00000"));
            assertFalse(it.isValid());
        }
    }

    @Test
    void reopenAndCheckpoint() throws Exception {
        db.put(cf, b("a"), b("1"));
        Path ckpt = dir.resolve("ckpt");
        db.checkpoint(ckpt.toString());
        db.put(cf, b("a"), b("2"));
        db.close();
        try (LetheDb copy = LetheDb.open(ckpt.toString(), DbOptions.builder().build())) {
            assertEquals("1", s(copy.get(copy.defaultColumnFamily(), b("a"))));
        }
        db = LetheDb.open(dir.resolve("db").toString(), smallOptions());
        cf = db.defaultColumnFamily();
        assertEquals("2", s(db.get(cf, b("a"))));
    }

    @Test
    void checkpointInTwoStepsHoldsWhatWasWrittenBeforeItBegan() throws Exception {
        db.put(cf, b("a"), b("1"));
        db.put(cf, b("b"), b("1"));
        Path ckpt = dir.resolve("ckpt");
        PendingCheckpoint pending = db.beginCheckpoint(ckpt.toString());
        assertTrue(Files.isDirectory(ckpt));
        db.put(cf, b("a"), b("2"));
        db.delete(cf, b("b"));
        long flushes = db.statistics().get(Ticker.FLUSHES);
        pending.finish();
        assertThrows(IllegalStateException.class, pending::finish);
        pending.close();  // finished: the copy stays
        assertEquals(flushes, db.statistics().get(Ticker.FLUSHES));
        assertTrue(db.statistics().get(Ticker.BYTES_WRITTEN_CHECKPOINT_IMAGE) > 0);
        try (LetheDb copy = LetheDb.open(ckpt.toString(), DbOptions.builder().build())) {
            assertEquals("1", s(copy.get(copy.defaultColumnFamily(), b("a"))));
            assertEquals("1", s(copy.get(copy.defaultColumnFamily(), b("b"))));
        }
        assertEquals("2", s(db.get(cf, b("a"))));

        Path abandoned = dir.resolve("abandoned");
        db.beginCheckpoint(abandoned.toString()).close();
        assertFalse(Files.exists(abandoned));
    }

    /** Each family's memtables are an image: written from two threads at once, then finish writes the rest. */
    @Test
    void checkpointImagesAreWrittenAtOnceAheadOfFinish() throws Exception {
        ColumnFamilyHandle a = db.createColumnFamily("a", ColumnFamilyOptions.DEFAULT);
        ColumnFamilyHandle c = db.createColumnFamily("c", ColumnFamilyOptions.DEFAULT);
        for (ColumnFamilyHandle h : List.of(cf, a, c)) {
            db.put(h, b("k"), b(h.name()));
        }
        Path ckpt = dir.resolve("images");
        PendingCheckpoint pending = db.beginCheckpoint(ckpt.toString(), false, false);
        db.put(a, b("k"), b("after"));
        assertEquals(3, pending.imageCount());
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(2);
        try {
            var first = pool.submit(() -> pending.writeImage(0));
            var second = pool.submit(() -> pending.writeImage(1));
            for (List<String> files : List.of(first.get(), second.get())) {
                assertEquals(1, files.size(), files.toString());
                assertTrue(Files.isRegularFile(ckpt.resolve(files.get(0))), files.get(0));
            }
            assertFalse(first.get().equals(second.get()));
        } finally {
            pool.shutdownNow();
        }
        assertThrows(LetheException.class, () -> pending.writeImage(0));  // at most once
        assertThrows(LetheException.class, () -> pending.writeImage(3));
        assertThrows(LetheException.class, () -> pending.writeImage(-1));
        pending.finish();  // image 2 and the manifest
        assertThrows(IllegalStateException.class, () -> pending.writeImage(2));  // released once finished
        try (LetheDb copy = LetheDb.open(ckpt.toString(), DbOptions.builder().build())) {
            for (String name : List.of("a", "c")) {
                assertEquals(name, s(copy.get(copy.columnFamily(name), b("k"))));
            }
            assertEquals(cf.name(), s(copy.get(copy.defaultColumnFamily(), b("k"))));
        }
    }

    /** Open iterators and checkpoints count in the statistics until closed; the iterator holds a version. */
    @Test
    void openIteratorsAndCheckpointsAreCounted() throws Exception {
        db.put(cf, b("a"), b("1"));
        db.flush();
        LetheIterator it = db.newIterator(cf);
        PendingCheckpoint copy = db.beginCheckpoint(dir.resolve("copy").toString());
        Statistics st = db.statistics();
        assertEquals(1, st.get(Ticker.OPEN_ITERATORS));
        assertEquals(1, st.get(Ticker.OPEN_CHECKPOINTS));
        db.put(cf, b("b"), b("2"));
        db.flush();  // a new version: the iterator's and the copy's is held
        assertTrue(db.statistics().get(Ticker.HELD_VERSIONS) >= 1);
        it.close();
        copy.close();
        st = db.statistics();
        assertEquals(0, st.get(Ticker.OPEN_ITERATORS));
        assertEquals(0, st.get(Ticker.OPEN_CHECKPOINTS));
        assertEquals(0, st.get(Ticker.HELD_VERSIONS));
        assertEquals(0, st.get(Ticker.OLDEST_HELD_VERSION_AGE_US));
    }

    @Test
    void liveFilesStatisticsAndProperties() throws Exception {
        java.util.Random random = new java.util.Random(7);
        for (int i = 0; i < 3000; i++) {
            byte[] value = new byte[100]; // random: the sizes below assume values that do not compress
            random.nextBytes(value);
            db.put(cf, b("key" + i), value);
        }
        // Settled first: a compaction running after the listing would delete the files it replaced.
        db.flush();
        db.waitForBackgroundWork();
        List<LiveFile> files = db.liveFiles(true);
        assertTrue(files.stream().anyMatch(LiveFile::immutable));
        assertTrue(files.stream().anyMatch(f -> f.name().startsWith("MANIFEST-")));
        for (LiveFile f : files) {
            assertTrue(Files.exists(dir.resolve("db").resolve(f.name())), f.name());
        }
        Statistics st = db.statistics();
        assertTrue(st.get(Ticker.BYTES_WRITTEN_FLUSH) > 0);
        assertTrue(st.get(Ticker.USER_BYTES_WRITTEN) > 300_000);
        assertEquals("default", st.columnFamilies().get(0).name());
        assertTrue(st.columnFamilies().get(0).totalBytes() > 0);
        assertEquals(st.columnFamilies().get(0).totalBytes(), st.get(Ticker.LIVE_BYTES), "live bytes: the files'");
        db.compactAll();
        st = db.statistics();
        assertTrue(st.get(Ticker.COMPACTIONS_MANUAL) + st.get(Ticker.TRIVIAL_MOVES) > 0, st.toString());
        assertEquals(st.get(Ticker.BYTES_WRITTEN_COMPACTION), st.get(Ticker.COMPACTION_BYTES_LEVEL0)
                + st.get(Ticker.COMPACTION_BYTES_SATURATION) + st.get(Ticker.COMPACTION_BYTES_MANUAL)
                + st.get(Ticker.COMPACTION_BYTES_TRIVIAL_MOVE) + st.get(Ticker.COMPACTION_BYTES_DELETE_DRIVEN)
                + st.get(Ticker.COMPACTION_BYTES_PAGE_REWRITE),
                "compaction bytes by reason add up");
        String stats = db.property(cf, "lethe.stats");
        assertNotNull(stats);
        assertTrue(stats.contains("level"));
        assertNull(db.property(cf, "no.such.property"));
    }

    @Test
    void compressionOptionsCrossTheBridge() throws Exception {
        java.util.Map<Compression, Long> bytes = new java.util.EnumMap<>(Compression.class);
        byte[] value = b("state ".repeat(40));
        for (Compression c : Compression.values()) {
            Compression flushed = c == Compression.NONE ? Compression.LZ4 : Compression.NONE;
            ColumnFamilyOptions cfo = ColumnFamilyOptions.builder().compression(c)
                    .bottommostCompression(c == Compression.LZ4 ? Compression.ZSTD : null)
                    .flushCompression(flushed).build();
            assertEquals(c == Compression.LZ4 ? Compression.ZSTD : c, cfo.bottommostCompression());
            try (LetheDb other = LetheDb.open(dir.resolve("codec-" + c).toString(),
                    DbOptions.builder().defaultColumnFamilyOptions(cfo).build())) {
                ColumnFamilyHandle d = other.defaultColumnFamily();
                assertEquals(flushed.name().toLowerCase(java.util.Locale.ROOT),
                        other.property(d, "lethe.flush-compression"));
                for (int i = 0; i < 3000; i++) {
                    other.put(d, b("key" + i), value);
                }
                other.compactAll();
                for (int i = 0; i < 3000; i += 101) {
                    assertArrayEquals(value, other.get(d, b("key" + i)));
                }
                bytes.put(c, other.statistics().columnFamilies().get(0).totalBytes());
            }
        }
        assertTrue(bytes.get(Compression.LZ4) < bytes.get(Compression.NONE) / 4, bytes.toString());
        assertTrue(bytes.get(Compression.ZSTD) < bytes.get(Compression.NONE) / 4, bytes.toString());
    }

    @Test
    void fadeOptionsAndDeleteStatisticsCrossTheBridge() throws Exception {
        db.close();
        db = LetheDb.open(dir.resolve("fade").toString(), DbOptions.builder().avoidBlindDeletes(true)
                .defaultColumnFamilyOptions(ColumnFamilyOptions.builder()
                        .deletePersistenceThreshold(java.time.Duration.ofMinutes(5))
                        .fadeFilePick(ColumnFamilyOptions.FadeFilePick.OLDEST_DELETE).build())
                .build());
        ColumnFamilyHandle d = db.defaultColumnFamily();
        db.delete(d, b("never-written"));
        db.put(d, b("k"), b("v"));
        db.flush();  // "k" is in a file: its delete must reach the files too
        db.delete(d, b("k"));
        Statistics st = db.statistics();
        assertEquals(1, st.get(Ticker.BLIND_DELETES_SKIPPED));
        Statistics.ColumnFamily family = st.columnFamilies().get(0);
        assertEquals(300_000_000L, family.deletePersistenceThresholdMicros());
        db.flush();
        st = db.statistics();
        assertEquals(1, st.columnFamilies().get(0).tombstones(), "the written tombstone is in a file");
        assertTrue(st.columnFamilies().get(0).levels().get(0).oldestTombstoneAgeMicros() >= 0);
        assertEquals(5, st.columnFamilies().get(0).levels().get(0).tombstoneAgeHistogram().size());
        assertEquals(1, st.columnFamilies().get(0).levels().get(0).tombstoneAgeHistogram().get(0),
                "a fresh tombstone is in the youngest bucket");
    }

    @Test
    void secondaryDeletesByDeleteKeyCrossTheBridge() throws Exception {
        for (int i = 0; i < 3000; i++) {
            db.put(cf, b(String.format("key%05d", i)), b("value-" + i), i % 7);
        }
        db.put(cf, b("forever"), b("v"));  // maximum delete key: never removed by delete key
        db.compactAll();
        db.advanceHorizon(cf, 3);  // 3/7 of the entries: every delete tile has a page below 3
        db.advanceHorizon(cf, 0);  // never moves back
        assertEquals(3, db.horizon(cf));
        assertNull(db.get(cf, b("key00002")), "delete key 2 is below the horizon");
        assertEquals("value-3", s(db.get(cf, b("key00003"))));
        db.deleteByDeleteKey(cf, 5, -1L);  // unsigned: up to the maximum, which itself is never removed
        assertNull(db.get(cf, b("key00005")));
        assertNull(db.get(cf, b("key00006")));
        assertEquals("v", s(db.get(cf, b("forever"))));
        db.put(cf, b("key00005"), b("again"), 5);  // written after the range delete: stays
        assertEquals("again", s(db.get(cf, b("key00005"))));
        assertThrows(IllegalArgumentException.class, () -> db.deleteByDeleteKey(cf, 9, 3));
        db.waitForBackgroundWork();
        Statistics st = db.statistics();
        assertEquals(2, st.get(Ticker.SECONDARY_DELETES));
        assertTrue(st.get(Ticker.PAGES_DROPPED) > 0, "whole pages were dropped: " + st);
        assertTrue(st.get(Ticker.PAGE_BYTES_DROPPED) > 0);
        assertEquals(3, st.columnFamilies().get(0).horizon());
        db.close();
        db = LetheDb.open(dir.resolve("db").toString(), smallOptions());
        cf = db.defaultColumnFamily();
        assertEquals(3, db.horizon(cf));
        long live = 0;
        try (LetheIterator it = db.newIterator(cf)) {
            for (it.seekToFirst(); it.isValid(); it.next()) {
                live++;
            }
        }
        long expected = 1 + 1; // "forever" and the rewritten key00005
        for (int i = 0; i < 3000; i++) {
            expected += i % 7 >= 3 && i % 7 <= 4 ? 1 : 0;
        }
        assertEquals(expected, live);
    }

    @Test
    void pointDeletesWithADeleteKeyLeaveWithTheHorizon() throws Exception {
        for (int i = 0; i < 200; i++) {
            db.put(cf, b("w" + i), b("contents"), 100);
        }
        db.flush();
        WriteBatch clears = new WriteBatch();
        for (int i = 0; i < 200; i++) {
            clears.delete(cf, b("w" + i), 100);
        }
        db.write(WriteOptions.DEFAULT, clears);
        db.delete(WriteOptions.DEFAULT, cf, b("w0"), 100);
        assertNull(db.get(cf, b("w7")));
        db.flush();
        assertEquals(200, tombstones(db.statistics()));
        db.advanceHorizon(cf, 101);
        db.waitForBackgroundWork();
        assertEquals(0, tombstones(db.statistics()), "the tombstones left with the pages they delete");
        assertEquals(0, db.statistics().columnFamilies().get(0).levels().stream()
                .mapToLong(Statistics.Level::entries).sum());
    }

    private static long tombstones(Statistics st) {
        return st.columnFamilies().get(0).tombstones();
    }

    @Test
    void columnFamiliesLifecycle() throws Exception {
        ColumnFamilyHandle a = db.createColumnFamily("a", ColumnFamilyOptions.builder().pagesPerTile(16).build());
        db.put(a, b("k"), b("v"));
        assertEquals(2, db.columnFamilies().size());
        assertEquals(a, db.columnFamily("a"));
        LetheException dup = assertThrows(LetheException.class,
                () -> db.createColumnFamily("a", ColumnFamilyOptions.DEFAULT));
        assertEquals(StatusCode.INVALID_ARGUMENT, dup.code());
        db.dropColumnFamily(a);
        assertTrue(a.isDropped());
        assertThrows(IllegalStateException.class, () -> db.get(a, b("k")));
        assertNull(db.columnFamily("a"));
        assertFalse(db.columnFamilies().contains(a));
    }

    @Test
    void openingALockedDatabaseIsBusy() {
        LetheException e = assertThrows(LetheException.class,
                () -> LetheDb.open(dir.resolve("db").toString(), DbOptions.builder().build()));
        assertEquals(StatusCode.BUSY, e.code());
    }
}
