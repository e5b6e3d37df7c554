package io.lethe.flink.snapshot;

import java.io.Closeable;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Moves a checkpoint's files, each file one task, on up to a fixed number of threads: the uploads of
 * a native checkpoint and the downloads of its restore. One file at a time leaves the checkpoint
 * storage's bandwidth idle while a single stream waits; several in flight use it, as the RocksDB
 * backend's transfer threads do.
 *
 * <p>With one thread every task runs on the caller's thread. When a task fails, the tasks not yet
 * started are skipped, the running ones finish (each registers what it uploaded with the caller's
 * registries, which discard it), and the first failure is thrown.
 *
 * <p>Thread-safe; one instance per backend, closed with it.
 */
public final class FileTransfer implements Closeable {
    private static final AtomicInteger POOLS = new AtomicInteger();

    private final ExecutorService pool;

    /** @param threads at least 1 */
    public FileTransfer(int threads) {
        if (threads < 1) {
            throw new IllegalArgumentException("transfer threads must be at least 1, not " + threads);
        }
        if (threads == 1) {
            this.pool = null;
        } else {
            int id = POOLS.incrementAndGet();
            AtomicInteger n = new AtomicInteger();
            this.pool = Executors.newFixedThreadPool(threads, r -> {
                Thread t = new Thread(r, "lethe-transfer-" + id + "-" + n.incrementAndGet());
                t.setDaemon(true);
                return t;
            });
        }
    }

    /**
     * Runs every task and returns their results in the tasks' order.
     *
     * @throws Exception the first failure of a task (by the tasks' order), after the others stopped
     */
    public <T> List<T> run(List<Callable<T>> tasks) throws Exception {
        List<T> results = new ArrayList<>(tasks.size());
        if (pool == null || tasks.size() <= 1) {
            for (Callable<T> task : tasks) {
                results.add(task.call());
            }
            return results;
        }
        AtomicBoolean failed = new AtomicBoolean();
        List<Future<T>> futures = new ArrayList<>(tasks.size());
        for (Callable<T> task : tasks) {
            futures.add(pool.submit(() -> {
                if (failed.get()) {
                    throw new CancellationException("an earlier transfer failed");
                }
                try {
                    return task.call();
                } catch (Exception | Error e) {
                    failed.set(true);
                    throw e;
                }
            }));
        }
        return collect(futures, failed, results);
    }

    private static <T> List<T> collect(List<Future<T>> futures, AtomicBoolean failed, List<T> results)
            throws Exception {
        Exception failure = null;
        for (Future<T> f : futures) {
            try {
                T result = f.get();
                if (failure == null) {
                    results.add(result);
                }
            } catch (ExecutionException e) {
                if (failure == null && !(e.getCause() instanceof CancellationException)) {
                    failure = e.getCause() instanceof Exception ? (Exception) e.getCause() : e;
                }
            } catch (InterruptedException e) {
                failed.set(true);
                futures.forEach(x -> x.cancel(true));
                Thread.currentThread().interrupt();
                throw e;
            }
        }
        if (failure != null) {
            throw failure;
        }
        return results;
    }

    @Override
    public void close() {
        if (pool != null) {
            pool.shutdownNow();
        }
    }
}
