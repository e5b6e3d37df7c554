package io.lethe.flink.async;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lethe.engine.ColumnFamilyHandle;
import io.lethe.engine.ColumnFamilyOptions;
import io.lethe.engine.DbOptions;
import io.lethe.engine.LetheDb;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Random;
import java.util.Set;

class EngineKeyTest {
    @TempDir
    Path dir;

    private LetheDb db;
    private ColumnFamilyHandle first;
    private ColumnFamilyHandle second;

    @BeforeEach
    void open() throws Exception {
        db = LetheDb.open(dir.resolve("db").toString(), DbOptions.builder().useWal(false).build());
        first = db.createColumnFamily("first", ColumnFamilyOptions.DEFAULT);
        second = db.createColumnFamily("second", ColumnFamilyOptions.DEFAULT);
    }

    @AfterEach
    void close() throws Exception {
        db.close();
    }

    @Test
    void equalContentIsOneKeyAtEveryLength() {
        Random random = new Random(7);
        for (int length = 0; length <= 70; length++) {
            byte[] key = new byte[length];
            random.nextBytes(key);
            EngineKey a = EngineKey.of(first, key);
            EngineKey b = EngineKey.of(first, key.clone());
            assertEquals(a, b, "length " + length);
            assertEquals(a.hashCode(), b.hashCode(), "length " + length);
            assertNotEquals(a, EngineKey.of(second, key.clone()), "another column family, length " + length);
        }
    }

    @Test
    void everyByteAndTheLengthCountInTheHash() {
        Random random = new Random(11);
        for (int length : new int[] {1, 7, 8, 9, 15, 16, 230}) {
            byte[] key = new byte[length];
            random.nextBytes(key);
            int base = EngineKey.hash(key);
            for (int i = 0; i < length; i++) {
                byte[] changed = key.clone();
                changed[i] ^= (byte) (1 << random.nextInt(8));
                assertNotEquals(base, EngineKey.hash(changed), "length " + length + ", byte " + i);
                assertNotEquals(EngineKey.of(first, key), EngineKey.of(first, changed));
            }
            byte[] longer = Arrays.copyOf(key, length + 1);
            assertNotEquals(base, EngineKey.hash(longer), "a trailing zero byte, length " + length);
        }
    }

    @Test
    void keysWithALongCommonPrefixSpreadOverTheHashes() {
        // SQL join state: a long shared prefix (key group, key, namespace), a row that differs late.
        byte[] key = new byte[230];
        new Random(3).nextBytes(key);
        Set<Integer> hashes = new HashSet<>();
        Set<Integer> buckets = new HashSet<>();
        int keys = 100_000;
        for (int n = 0; n < keys; n++) {
            key[200] = (byte) n;
            key[201] = (byte) (n >>> 8);
            key[229] = (byte) (n >>> 16);
            int h = EngineKey.hash(key);
            hashes.add(h);
            buckets.add((h ^ (h >>> 16)) & (1024 - 1));
        }
        assertTrue(hashes.size() >= keys - 5, hashes.size() + " distinct hashes of " + keys);
        assertEquals(1024, buckets.size(), "buckets of a 1,024-slot hash table in use");
    }
}
