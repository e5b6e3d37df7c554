package io.lethe.bench;

import org.rocksdb.AbstractCompactionFilterFactory;

import java.lang.reflect.Proxy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicLong;

/**
 * RocksDB's compaction-filter alternative for {@link SecondaryDeleteBench}, run by it in a child JVM whose
 * class path puts Flink's frocksdbjni before rocksdbjni: Flink's own TTL compaction filter
 * ({@code FlinkCompactionFilter}, the one its RocksDB backend installs for state TTL) reads the 8-byte
 * timestamp at the start of each value and drops the entry when timestamp + ttl <= now. With ttl = 1 and
 * "now" set to the cut, that is exactly "delete key below the cut"; a forced full compaction applies it.
 *
 * <p>Arguments: {@code n correlated seed workDir selectivity...}. Prints one {@code RESULT} line per
 * selectivity: selectivity, milliseconds, bytes read, bytes written, entries left, tombstones left, bytes
 * the files allocated before and after.
 */
public final class FrocksFilterRun {
    private FrocksFilterRun() {}

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        boolean correlated = Boolean.parseBoolean(args[1]);
        long seed = Long.parseLong(args[2]);
        Path work = Path.of(args[3]);
        SecondaryDeleteBench.DataSet data = new SecondaryDeleteBench.DataSet(n, correlated, seed);
        AtomicLong now = new AtomicLong(0);
        Path base = work.resolve("frocks-base");
        try (RocksSecondary db = new RocksSecondary(base, filters(now))) {
            db.load(data);
            for (int a = 4; a < args.length; a++) {
                double sel = Double.parseDouble(args[a]);
                long cut = data.cut(sel);
                Path copy = work.resolve("frocks-copy");
                SecondaryDeleteBench.freshCopy(db::checkpoint, work, copy);
                long allocatedBefore = OnDisk.allocatedBytes(copy);
                now.set(0);
                try (RocksSecondary c = new RocksSecondary(copy, filters(now))) {
                    long t0 = System.nanoTime();
                    now.set(cut);
                    c.compactAll();
                    long millis = (System.nanoTime() - t0) / 1_000_000;
                    long allocatedAfter = OnDisk.settledAllocatedBytes(copy);
                    long[] left = c.entriesAndTombstones();
                    System.out.printf("RESULT %s %d %d %d %d %d %d %d%n", args[a], millis, c.bytesRead(),
                            c.bytesWritten(), left[0], left[1], allocatedBefore, allocatedAfter);
                }
                SecondaryDeleteBench.deleteTree(copy);
            }
        }
        SecondaryDeleteBench.deleteTree(base);
        Files.deleteIfExists(work);
    }

    /** Flink's TTL filter for value state, ttl 1 ms, "now" from {@code now} (through reflection: the class
     * exists only in frocksdbjni). */
    static AbstractCompactionFilterFactory<?> filters(AtomicLong now) throws Exception {
        ClassLoader loader = FrocksFilterRun.class.getClassLoader();
        Class<?> providerType = Class.forName("org.rocksdb.FlinkCompactionFilter$TimeProvider", true, loader);
        Object provider = Proxy.newProxyInstance(loader, new Class<?>[] {providerType}, (proxy, method, args) ->
                switch (method.getName()) {
                    case "currentTimestamp" -> now.get();
                    case "hashCode" -> System.identityHashCode(proxy);
                    case "equals" -> proxy == args[0];
                    default -> "TimeProvider";
                });
        Class<?> factoryType = Class.forName("org.rocksdb.FlinkCompactionFilter$FlinkCompactionFilterFactory", true,
                loader);
        Object factory = factoryType.getConstructor(providerType).newInstance(provider);
        Class<?> configType = Class.forName("org.rocksdb.FlinkCompactionFilter$Config", true, loader);
        Object config = configType.getMethod("createForValue", long.class, long.class).invoke(null, 1L, 1000L);
        factoryType.getMethod("configure", configType).invoke(factory, config);
        return (AbstractCompactionFilterFactory<?>) factory;
    }
}
