package io.lethe.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.util.NavigableMap;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The range-delete benchmark's reads do the same work on both engines: after range deletes, with
 * their tombstones in the memtable and flushed, a bounded range scan and a seek with next return
 * the bytes of exactly the live entries a sorted map holds (values of random lengths, so that
 * another set of entries would show in the sum).
 */
class StoreScansTest {
    private static final int KEYS = 5_000;
    /** Values of 1 to this many bytes: the bytes a scan returns tell which entries it read. */
    private static final int MAX_VALUE_BYTES = 80;

    @TempDir
    Path dir;

    @Test
    void letheScansReturnTheLiveEntries() throws Exception {
        try (KeyValueStore store = new LetheStore(dir.resolve("lethe").toString(), 4L << 20, 4L << 20, 0)) {
            checkScans(store);
        }
    }

    @Test
    void rocksScansReturnTheLiveEntries() throws Exception {
        try (KeyValueStore store = new RocksStore(dir.resolve("rocks").toString(), 4L << 20, 4L << 20)) {
            checkScans(store);
        }
    }

    private static void checkScans(KeyValueStore store) throws Exception {
        NavigableMap<String, byte[]> model = new TreeMap<>();
        SplittableRandom random = new SplittableRandom(3);
        for (int i = 0; i < KEYS; i++) {
            byte[] value = new byte[1 + random.nextInt(MAX_VALUE_BYTES)];
            random.nextBytes(value);
            store.put(EngineBenchmark.key(i), value);
            model.put(new String(EngineBenchmark.key(i)), value);
        }
        store.settle();
        // As the benchmark's small ranges: [100 r + 37, 100 r + 47).
        for (int r = 0; r < KEYS / 100; r++) {
            store.deleteRange(EngineBenchmark.key(100L * r + 37), EngineBenchmark.key(100L * r + 47));
            model.subMap(new String(EngineBenchmark.key(100L * r + 37)), new String(EngineBenchmark.key(100L * r + 47)))
                    .clear();
        }
        compare(store, model, random);
        store.flushMemtable();
        compare(store, model, random);
    }

    private static void compare(KeyValueStore store, NavigableMap<String, byte[]> model, SplittableRandom random)
            throws Exception {
        for (int i = 0; i < 300; i++) {
            long from = random.nextInt(KEYS);
            String lo = new String(EngineBenchmark.key(from));
            String hi = new String(EngineBenchmark.key(from + 100));
            long range = bytes(model.subMap(lo, true, hi, false), Integer.MAX_VALUE);
            assertEquals(range, store.scanRange(EngineBenchmark.key(from), EngineBenchmark.key(from + 100)),
                    "scan of [" + lo + ", " + hi + ")");
            assertEquals(bytes(model.tailMap(lo, true), 100), store.seekAndNext(EngineBenchmark.key(from), 100),
                    "seek to " + lo + " and 100 next");
        }
    }

    /** The bytes of the first {@code limit} entries, keys and values. */
    private static long bytes(NavigableMap<String, byte[]> entries, int limit) {
        return entries.entrySet().stream().limit(limit).mapToLong(e -> e.getKey().length() + e.getValue().length).sum();
    }
}
