package io.lethe.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Reads after range deletes, Lethe against RocksDB, in one JVM: {@code keys} keys of 16 B with random
 * 500 B values (neither engine compresses), loaded and settled; then no delete ({@code none}, the
 * baseline), range deletes covering 10 % of the keys in ranges of 10 keys ({@code small}), or 75 % in
 * 15 long ranges ({@code long}), their tombstones left in the memtable or flushed to a file (no
 * compaction, so the deleted data stays below them). Point lookups of uniformly random keys (found or
 * not, all counted), scans (a seek to a random key, then 100 next, without a bound) and range scans
 * (every entry of the 100 keys from a random key, through an iterator bounded above by the first key
 * past them). The memory budget is the engine benchmark's.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class RangeDeleteBenchmark {
    static final int VALUE_BYTES = 500;

    @Param({"lethe", "rocksdb"})
    public String engine;

    @Param({"none", "small", "long"})
    public String deletes;

    @Param({"memtable", "flushed"})
    public String tombstones;

    @Param({"1000000"})
    public int keys;

    private Path dir;
    private KeyValueStore store;

    @State(Scope.Thread)
    public static class Cursor {
        private static final AtomicInteger THREADS = new AtomicInteger();
        final SplittableRandom random = new SplittableRandom(42 + THREADS.getAndIncrement());
    }

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        dir = Files.createTempDirectory("range-delete-bench-" + engine);
        store = engine.equals("lethe")
                ? new LetheStore(dir.resolve("db").toString(), 64L << 20, 32L << 20, 0)
                : new RocksStore(dir.resolve("db").toString(), 64L << 20, 32L << 20);
        SplittableRandom random = new SplittableRandom(7);
        byte[] value = new byte[VALUE_BYTES];
        for (int i = 0; i < keys; i++) {
            random.nextBytes(value);
            store.put(EngineBenchmark.key((i * 7919L) % keys), value);
        }
        store.settle();
        deleteRanges();
        if (tombstones.equals("flushed")) {
            store.flushMemtable();
        }
    }

    /** Small: [100 r + 37, 100 r + 47) for every r; long: the first 75 % of each fifteenth. */
    private void deleteRanges() throws Exception {
        if (deletes.equals("small")) {
            for (long r = 0; r < keys / 100; r++) {
                store.deleteRange(EngineBenchmark.key(100 * r + 37), EngineBenchmark.key(100 * r + 47));
            }
        } else if (deletes.equals("long")) {
            long part = keys / 15;
            for (long r = 0; r < 15; r++) {
                store.deleteRange(EngineBenchmark.key(r * part), EngineBenchmark.key(r * part + part * 3 / 4));
            }
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() throws Exception {
        store.close();
        OnDisk.deleteTree(dir);
    }

    @Benchmark
    public byte[] get(Cursor c) throws Exception {
        return store.get(EngineBenchmark.key(c.random.nextInt(keys)));
    }

    @Benchmark
    public long scan100(Cursor c) throws Exception {
        return store.seekAndNext(EngineBenchmark.key(c.random.nextInt(keys)), 100);
    }

    /**
     * Every entry of a range of 100 keys from a random key, through a bounded iterator, as state
     * iteration reads a prefix's entries: after the deletes the range holds fewer of them (scan100
     * reads 100 live entries, so it passes over the deleted ones in addition). Without the bound,
     * an iterator that reads ahead in batches (Lethe's Java iterator) would read past the range.
     */
    @Benchmark
    public long scanRange100(Cursor c) throws Exception {
        long from = c.random.nextInt(keys);
        return store.scanRange(EngineBenchmark.key(from), EngineBenchmark.key(from + 100));
    }
}
