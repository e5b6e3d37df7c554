package io.lethe.bench.jobs;

import io.lethe.flink.LetheOptions;
import io.lethe.flink.LetheStateBackend;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.api.common.typeutils.base.array.BytePrimitiveArraySerializer;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.core.fs.Path;
import org.apache.flink.core.fs.local.LocalFileSystem;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.operators.testutils.MockEnvironment;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedStateBackendParametersImpl;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.runtime.state.filesystem.FsCheckpointStreamFactory;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.RunnableFuture;

/**
 * Restore time of Lethe's keyed backend from a native checkpoint against the number of checkpoint
 * transfer threads ({@code state.backend.lethe.checkpoint.transfer.thread.num}): one backend writes
 * {@code MiB} of incompressible values (1 KiB each) and takes a checkpoint into a directory on the
 * local disk; then, round after round, a backend is restored from it with 1, 2, 4 and 8 threads
 * (rounds alternate the order), the OS page cache dropped before each restore where the machine
 * allows it, and a sample of its values checked.
 *
 * <p>{@code RestoreThreadsBench DIR [MiB] [rounds]}: writes {@code DIR/restore-threads.csv}.
 */
public final class RestoreThreadsBench {
    private static final int MAX_PARALLELISM = 128;
    private static final int VALUE_BYTES = 1024;
    private static final int[] THREADS = {1, 2, 4, 8};
    private static final ValueStateDescriptor<byte[]> VALUES =
            new ValueStateDescriptor<>("values", BytePrimitiveArraySerializer.INSTANCE);

    private final java.nio.file.Path dir;
    private final MockEnvironment env = MockEnvironment.builder().build();

    private RestoreThreadsBench(java.nio.file.Path dir) {
        this.dir = dir;
    }

    public static void main(String[] args) throws Exception {
        java.nio.file.Path dir = java.nio.file.Path.of(args.length > 0 ? args[0] : "target/restore-threads");
        int mib = args.length > 1 ? Integer.parseInt(args[1]) : 1024;
        int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 3;
        Files.createDirectories(dir);
        new RestoreThreadsBench(dir).run(mib * 1024, rounds);
    }

    private void run(int keys, int rounds) throws Exception {
        FsCheckpointStreamFactory storage = storage(dir.resolve("storage"));
        KeyedStateHandle checkpoint = writeAndCheckpoint(keys, storage);
        long bytes = checkpoint.getStateSize();
        System.out.printf(Locale.ROOT, "checkpoint of %,d keys: %,.0f MiB%n", keys, bytes / 1048576.0);
        List<String> rows = new ArrayList<>();
        for (int round = 1; round <= rounds; round++) {
            int[] order = round % 2 == 1 ? THREADS : reversed(THREADS);
            for (int threads : order) {
                String notDropped = LargeStateRun.dropPageCache();
                long start = System.nanoTime();
                AbstractKeyedStateBackend<Integer> restored = backend(threads, List.of(checkpoint));
                double seconds = (System.nanoTime() - start) / 1e9;
                check(restored, keys);
                restored.dispose();
                System.out.printf(Locale.ROOT, "round %d, %d thread(s): restored in %.2f s (%.0f MiB/s)%s%n", round,
                        threads, seconds, bytes / 1048576.0 / seconds, notDropped == null ? "" : " (" + notDropped + ")");
                rows.add(String.format(Locale.ROOT, "%d,%d,%.3f,%d,%s", round, threads, seconds, bytes, notDropped == null));
            }
        }
        try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(dir.resolve("restore-threads.csv")))) {
            w.println("round,threads,seconds,checkpoint_bytes,page_cache_dropped");
            rows.forEach(w::println);
        }
        env.close();
    }

    private KeyedStateHandle writeAndCheckpoint(int keys, FsCheckpointStreamFactory storage) throws Exception {
        AbstractKeyedStateBackend<Integer> b = backend(1, List.of());
        ValueState<byte[]> state = b.getPartitionedState(VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, VALUES);
        for (int k = 0; k < keys; k++) {
            b.setCurrentKey(k);
            state.update(value(k));
        }
        RunnableFuture<SnapshotResult<KeyedStateHandle>> f =
                b.snapshot(1, 1, storage, CheckpointOptions.forCheckpointWithDefaultLocation());
        f.run();
        KeyedStateHandle handle = f.get().getJobManagerOwnedSnapshot();
        b.dispose();
        return handle;
    }

    /** Every 1,000th key's value, as written. */
    private static void check(AbstractKeyedStateBackend<Integer> b, int keys) throws Exception {
        ValueState<byte[]> state = b.getPartitionedState(VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, VALUES);
        for (int k = 0; k < keys; k += 1000) {
            b.setCurrentKey(k);
            if (!Arrays.equals(value(k), state.value())) {
                throw new IllegalStateException("key " + k + " restored with another value");
            }
        }
    }

    /** Key k's value: random bytes seeded by k, so that pages do not compress. */
    private static byte[] value(int k) {
        byte[] v = new byte[VALUE_BYTES];
        new SplittableRandom(k).nextBytes(v);
        return v;
    }

    private AbstractKeyedStateBackend<Integer> backend(int threads, Collection<KeyedStateHandle> restore)
            throws IOException {
        return new LetheStateBackend()
                .with(LetheOptions.USE_MANAGED_MEMORY, false)
                .with(LetheOptions.CHECKPOINT_TRANSFER_THREADS, threads)
                .createKeyedStateBackend(new KeyedStateBackendParametersImpl<>(env, new JobID(), "restore-threads",
                        IntSerializer.INSTANCE, MAX_PARALLELISM, KeyGroupRange.of(0, MAX_PARALLELISM - 1),
                        env.getTaskKvStateRegistry(), TtlTimeProvider.DEFAULT, new UnregisteredMetricsGroup(), restore,
                        new CloseableRegistry()));
    }

    private static FsCheckpointStreamFactory storage(java.nio.file.Path directory) throws IOException {
        Files.createDirectories(directory.resolve("exclusive"));
        Files.createDirectories(directory.resolve("shared"));
        return new FsCheckpointStreamFactory(LocalFileSystem.getSharedInstance(), new Path(directory.resolve("exclusive").toUri()),
                new Path(directory.resolve("shared").toUri()), 0, 4096);
    }

    private static int[] reversed(int[] a) {
        int[] r = new int[a.length];
        for (int i = 0; i < a.length; i++) {
            r[i] = a[a.length - 1 - i];
        }
        return r;
    }
}
