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
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Point operations and scans, Lethe against RocksDB, in one JVM: 16-byte keys, 100-byte random
 * values (they do not compress; both engines run without compression), {@code keys} keys loaded at
 * even positions so that misses (odd positions) fall inside the key range and reach the Bloom
 * filters, equal memtable and cache budgets, WAL off. Run through {@link EngineBenchmarkRunner},
 * which runs the reads at 1, 2 and 4 threads and prints the Lethe/RocksDB ratio per operation.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class EngineBenchmark {
    static final int KEY_BYTES = 16;
    static final int VALUE_BYTES = 100;
    /** Distinct random values written round robin: no two neighbours in a page share bytes. */
    static final int VALUE_POOL = 4096;
    /** Keys per batched lookup. */
    static final int BATCH = 100;

    @Param({"lethe", "rocksdb"})
    public String engine;

    @Param({"1000000"})
    public int keys;

    @Param({"67108864"})
    public long writeBufferBytes;

    @Param({"33554432"})
    public long cacheBytes;

    /**
     * The tree measured: {@code settled} (flushed and compacted completely) or {@code loaded} (as
     * the load left it once background work stopped: its latest writes in a large memtable, the
     * rest in files that were never compacted on purpose).
     */
    @Param({"settled"})
    public String tree;

    /**
     * Threads that help each of Lethe's multiGet calls beside the caller. 0, the benchmark's
     * default, keeps a batch on the calling thread as rocksdbjni's {@code multiGetAsList} does, so
     * both engines use the same cores; Lethe's own default is 1. RocksDB ignores it.
     */
    @Param({"0"})
    public int multiGetHelpers;

    private Path dir;
    private KeyValueStore store;
    private final byte[][] values = new byte[VALUE_POOL][VALUE_BYTES];

    /** Each benchmark thread's own random source (JMH threads share the store). */
    @State(Scope.Thread)
    public static class Cursor {
        private static final AtomicInteger THREADS = new AtomicInteger();
        final SplittableRandom random = new SplittableRandom(42 + THREADS.getAndIncrement());
        final byte[][] batch = new byte[BATCH][];
    }

    /** Key i as 16 bytes: "k" then i as zero-padded decimal, so numeric order is byte order. */
    static byte[] key(long i) {
        byte[] k = new byte[KEY_BYTES];
        k[0] = (byte) 'k';
        for (int p = KEY_BYTES - 1; p >= 1; p--) {
            k[p] = (byte) ('0' + (i % 10));
            i /= 10;
        }
        return k;
    }

    /** A loaded key: the even positions 0, 2, ..., 2 * (keys - 1). */
    private byte[] present(Cursor c) {
        return key(2L * c.random.nextInt(keys));
    }

    private byte[] value(Cursor c) {
        return values[c.random.nextInt(VALUE_POOL)];
    }

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        dir = Files.createTempDirectory("engine-bench-" + engine);
        store = engine.equals("lethe")
                ? new LetheStore(dir.resolve("db").toString(), writeBufferBytes, cacheBytes, multiGetHelpers)
                : new RocksStore(dir.resolve("db").toString(), writeBufferBytes, cacheBytes);
        SplittableRandom random = new SplittableRandom(7);
        for (byte[] v : values) {
            random.nextBytes(v);
        }
        for (int i = 0; i < keys; i++) {
            store.put(key(2 * ((i * 7919L) % keys)), values[i % VALUE_POOL]);
        }
        if (tree.equals("settled")) {
            store.settle();
        } else {
            store.quiesce();
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() throws Exception {
        store.close();
        OnDisk.deleteTree(dir);
    }

    @Benchmark
    public void put(Cursor c) throws Exception {
        store.put(present(c), value(c));
    }

    @Benchmark
    public byte[] getHit(Cursor c) throws Exception {
        return store.get(present(c));
    }

    /** An absent key inside the key range (an odd position), between two loaded ones. */
    @Benchmark
    public byte[] getMiss(Cursor c) throws Exception {
        return store.get(key(2L * c.random.nextInt(keys) + 1));
    }

    /** Deletes a random key and puts it back, so the data set stays the same size. */
    @Benchmark
    public void deleteAndReinsert(Cursor c) throws Exception {
        byte[] k = present(c);
        store.delete(k);
        store.put(k, value(c));
    }

    /** A batch of loaded keys in random order; counted per key, so it compares with getHit. */
    @Benchmark
    @OperationsPerInvocation(BATCH)
    public long multiGet100(Cursor c) throws Exception {
        for (int i = 0; i < BATCH; i++) {
            c.batch[i] = present(c);
        }
        return store.multiGet(c.batch);
    }

    @Benchmark
    public long seekNext100(Cursor c) throws Exception {
        return store.seekAndNext(present(c), 100);
    }
}
