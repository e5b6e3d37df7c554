package io.lethe.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
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
 * Point operations and scans, Lethe against RocksDB, in one JVM: 16-byte keys, 100-byte values,
 * {@code keys} keys loaded, equal memtable and cache budgets, WAL off. Run through {@link
 * EngineBenchmarkRunner}, which prints the Lethe/RocksDB ratio per operation.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class EngineBenchmark {
    static final int KEY_BYTES = 16;
    static final int VALUE_BYTES = 100;

    @Param({"lethe", "rocksdb"})
    public String engine;

    @Param({"1000000"})
    public int keys;

    @Param({"67108864"})
    public long writeBufferBytes;

    @Param({"33554432"})
    public long cacheBytes;

    private Path dir;
    private KeyValueStore store;
    private final SplittableRandom random = new SplittableRandom(42);
    private final byte[] value = new byte[VALUE_BYTES];

    /** Key i as 16 bytes: "k" then i as zero-padded decimal, so numeric order is byte order. */
    static byte[] key(long i, char prefix) {
        byte[] k = new byte[KEY_BYTES];
        k[0] = (byte) prefix;
        for (int p = KEY_BYTES - 1; p >= 1; p--) {
            k[p] = (byte) ('0' + (i % 10));
            i /= 10;
        }
        return k;
    }

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        dir = Files.createTempDirectory("engine-bench-" + engine);
        store = engine.equals("lethe")
                ? new LetheStore(dir.resolve("db").toString(), writeBufferBytes, cacheBytes)
                : new RocksStore(dir.resolve("db").toString(), writeBufferBytes, cacheBytes);
        new SplittableRandom(7).nextBytes(value);
        for (int i = 0; i < keys; i++) {
            store.put(key((i * 7919L) % keys, 'k'), value);
        }
        store.settle();
    }

    @TearDown(Level.Trial)
    public void tearDown() throws Exception {
        store.close();
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    @Benchmark
    public void put() throws Exception {
        store.put(key(random.nextInt(keys), 'k'), value);
    }

    @Benchmark
    public byte[] getHit() throws Exception {
        return store.get(key(random.nextInt(keys), 'k'));
    }

    @Benchmark
    public byte[] getMiss() throws Exception {
        return store.get(key(random.nextInt(keys), 'm'));
    }

    /** Deletes a random key and puts it back, so the data set stays the same size. */
    @Benchmark
    public void deleteAndReinsert() throws Exception {
        byte[] k = key(random.nextInt(keys), 'k');
        store.delete(k);
        store.put(k, value);
    }

    @Benchmark
    public long seekNext100() throws Exception {
        return store.seekAndNext(key(random.nextInt(keys), 'k'), 100);
    }
}
