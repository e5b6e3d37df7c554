package io.lethe.bench.jobs;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.StateBackendOptions;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * The state backends the job benchmark compares, each configured as its own experts run it, and the
 * settings the report lists. Every backend gets the same managed memory (set by the benchmark).
 */
final class JobBackends {
    private JobBackends() {}

    /** All backends in report order; the quick mode leaves out lethe-h8. */
    static final List<String> ALL = List.of("lethe", "lethe-h8", "rocksdb", "rocksdb-heap-timers", "forst", "hashmap");

    /** The on-disk peers Lethe is judged against (the best of them per metric). */
    static final List<String> PEERS = List.of("rocksdb", "rocksdb-heap-timers", "forst");

    /** Sets {@code backend} up in {@code conf}, its files under {@code local}. */
    static void configure(String backend, Configuration conf, Path local) {
        switch (backend) {
            case "lethe", "lethe-h8", "lethe-adaptor" -> {
                conf.set(StateBackendOptions.STATE_BACKEND, "io.lethe.flink.LetheStateBackendFactory");
                conf.setString("state.backend.lethe.localdir", local.toString());
                conf.setString("state.backend.lethe.delete-persistence-threshold", "10 s");
                if (backend.equals("lethe-h8")) {
                    conf.setString("state.backend.lethe.pages-per-tile", "8");
                }
            }
            case "rocksdb", "rocksdb-heap-timers" -> {
                conf.set(StateBackendOptions.STATE_BACKEND, "rocksdb");
                conf.setString("state.backend.rocksdb.localdir", local.toString());
                conf.setString("state.backend.rocksdb.use-bloom-filter", "true");
                conf.setString("state.backend.rocksdb.timer-service.factory",
                        backend.equals("rocksdb") ? "ROCKSDB" : "HEAP");
            }
            case "forst" -> {
                conf.set(StateBackendOptions.STATE_BACKEND, "org.apache.flink.state.forst.ForStStateBackendFactory");
                conf.setString("state.backend.forst.local-dir", local.toString());
                conf.setString("state.backend.forst.primary-dir", "local-dir");
            }
            case "hashmap" -> conf.set(StateBackendOptions.STATE_BACKEND, "hashmap");
            default -> throw new IllegalArgumentException("unknown backend " + backend);
        }
        Map<String, String> overrides = ExperimentSettings.of(backend);
        if (!overrides.isEmpty()) {
            System.out.println("  " + backend + " with changed settings (an experiment): " + overrides);
            overrides.forEach(conf::setString);
        }
    }

    /**
     * For jobs with asynchronous state: Lethe with its own executor. ForSt always has its own; RocksDB and
     * HashMap run asynchronous operators through Flink's synchronous adaptor, one request at a time, and so
     * does lethe-adaptor (Lethe's default for asynchronous state).
     */
    static void asyncExecutor(String backend, Configuration conf) {
        if (backend.equals("lethe") || backend.equals("lethe-h8")) {
            conf.setString("state.backend.lethe.async-state.executor", "true");
        }
    }

    /** Whether the backend keeps its state on local disk (the HashMap backend keeps it on the heap). */
    static boolean onDisk(String backend) {
        return !backend.equals("hashmap");
    }

    /**
     * Whether the backend takes canonical savepoints (Flink's backend-independent format). ForSt 2.2.0
     * does not: Flink fails the job with "does not support CANONICAL savepoints".
     */
    static boolean canonicalSavepoints(String backend) {
        return !backend.equals("forst");
    }

    /** What the report lists per backend: every setting that differs from Flink's defaults, and those that matter. */
    static final String[][] SETTINGS = {
        {"lethe", "Lethe: D_th 10 s (state.backend.lethe.delete-persistence-threshold; its default is 1 h, 10 s"
                + " makes every delete and expiry finish within the runs), otherwise its defaults: timers in the"
                + " engine (128 cached per key group; their pages compressed with ZSTD), pages of 4 KiB, delete"
                + " tiles of one page but 8 in states with a TTL, LZ4 page compression with ZSTD (level 1) in the"
                + " last level, window contents compacted time-ordered (state.backend.lethe.window-compaction:"
                + " files stay in level 0, written with ZSTD, and leave by the horizon), checkpoints that copy the"
                + " memtables into the checkpoint (with ZSTD, in the asynchronous part, the states' copies written"
                + " at once and each uploaded when written) instead of flushing them, checkpoint files moved four at"
                + " a time, managed memory"},
        {"lethe-h8", "as lethe, with delete tiles of 8 pages in every state (state.backend.lethe.pages-per-tile: 8)"},
        {"lethe-adaptor", "as lethe, with asynchronous state run through Flink's synchronous adaptor, one request"
                + " at a time on the task thread (state.backend.lethe.async-state.executor: false, Lethe's default)"},
        {"rocksdb", "Flink's RocksDB backend (frocksdbjni 8.10): timers in RocksDB (its default), Bloom filter 10"
                + " bits/key (state.backend.rocksdb.use-bloom-filter: true), managed memory (its default),"
                + " compression Snappy on every level (its default), other options at their defaults"},
        {"rocksdb-heap-timers", "as rocksdb, with timers on the heap (state.backend.rocksdb.timer-service.factory:"
                + " HEAP)"},
        {"forst", "Flink's ForSt backend 2.2.0 (forstjni 0.1.8) as shipped, with its files on local disk"
                + " (state.backend.forst.primary-dir: local-dir): timers in ForSt, no Bloom filter, Snappy compression,"
                + " managed memory (its defaults); synchronous state, which ForSt keeps local, except where a job"
                + " has asynchronous state (Nexmark's async mode, the keyed-async job): ForSt's own executor, as shipped"},
        {"hashmap", "Flink's HashMap backend: state and timers on the heap, full checkpoints"},
    };
}
