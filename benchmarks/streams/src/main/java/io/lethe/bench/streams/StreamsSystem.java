package io.lethe.bench.streams;

import io.lethe.kafka.streams.LetheDslStoreSuppliers;
import io.lethe.kafka.streams.LetheStoreConfig;

import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.state.BuiltInDslStoreSuppliers;
import org.rocksdb.CompressionType;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/** A store implementation the benchmark runs the application on, with how it is configured. */
enum StreamsSystem {
    /** Lethe's stores by {@code dsl.store.suppliers.class}, on one memory budget for the application. */
    LETHE("lethe") {
        @Override
        void configure(Properties props, StreamsWorkload w) {
            props.put(StreamsConfig.DSL_STORE_SUPPLIERS_CLASS_CONFIG, LetheDslStoreSuppliers.class);
            props.put(LetheStoreConfig.MEMORY_BUDGET_BYTES, w.memoryBytes());
            props.put(LetheStoreConfig.DELETE_PERSISTENCE_THRESHOLD_MS, w.deletePersistenceThreshold().toMillis());
        }

        @Override
        String settings(StreamsWorkload w) {
            return "one engine per store and task, all on one " + (w.memoryBytes() >> 20) + " MiB memory budget"
                    + " (lethe.memory.budget.bytes: one page cache, write buffers up to half of it, open tables'"
                    + " index and filters counted in it); the window store's pages in ZSTD (the default of window and"
                    + " session stores); D_th " + w.deletePersistenceThreshold().toSeconds()
                    + " s; the horizon follows stream time minus retention";
        }

        @Override
        long oldestOnDisk(KafkaStreams streams, Path stateDir) {
            long oldest = Long.MAX_VALUE;
            for (Map.Entry<MetricName, ? extends Metric> e : streams.metrics().entrySet()) {
                MetricName n = e.getKey();
                if (n.name().equals("oldest-delete-key-on-disk")
                        && StreamsWorkload.STORE.equals(n.tags().get("lethe-state-id"))
                        && e.getValue().metricValue() instanceof Long v && v >= 0) {
                    oldest = Math.min(oldest, v);
                }
            }
            return oldest;
        }
    },
    /** Kafka Streams' RocksDB stores as shipped: nothing set. */
    ROCKSDB("rocksdb") {
        @Override
        void configure(Properties props, StreamsWorkload w) {
            props.put(StreamsConfig.DSL_STORE_SUPPLIERS_CLASS_CONFIG,
                    BuiltInDslStoreSuppliers.RocksDBDslStoreSuppliers.class);
        }

        @Override
        String settings(StreamsWorkload w) {
            return "Kafka Streams' defaults: a RocksDB instance per segment and task; each a 50 MiB block cache,"
                    + " up to three 16 MiB memtables, 4 KiB blocks, Bloom filter, universal compaction, no"
                    + " compression, every file kept open";
        }
    },
    /** Kafka Streams' RocksDB stores with Kafka's documented bounded-memory setter and LZ4. */
    ROCKSDB_TUNED("rocksdb-tuned") {
        @Override
        void configure(Properties props, StreamsWorkload w) {
            ROCKSDB.configure(props, w);
            props.put(StreamsConfig.ROCKSDB_CONFIG_SETTER_CLASS_CONFIG, BoundedRocksDBConfig.class);
            props.put(BoundedRocksDBConfig.MEMORY, w.memoryBytes());
        }

        @Override
        String settings(StreamsWorkload w) {
            return "as shipped, plus Kafka's bounded-memory config setter: one " + (w.memoryBytes() >> 20)
                    + " MiB block cache for all stores and segments, memtables charged to it (half at most),"
                    + " index and filter blocks in it with high priority; blocks of "
                    + (BoundedRocksDBConfig.BLOCK_SIZE >> 10) + " KiB as in Kafka's config-setter example; LZ4";
        }
    },
    /** As {@link #ROCKSDB_TUNED} with ZSTD on every level, as Lethe's window stores compress. */
    ROCKSDB_ZSTD("rocksdb-zstd") {
        @Override
        void configure(Properties props, StreamsWorkload w) {
            ROCKSDB_TUNED.configure(props, w);
            props.put(BoundedRocksDBConfig.COMPRESSION, CompressionType.ZSTD_COMPRESSION.name());
        }

        @Override
        String settings(StreamsWorkload w) {
            return "as rocksdb-tuned, with ZSTD instead of LZ4 on every level";
        }
    };

    private static final Pattern SEGMENT = Pattern.compile(Pattern.quote(StreamsWorkload.STORE) + "\\.(\\d+)");

    final String id;

    StreamsSystem(String id) {
        this.id = id;
    }

    static StreamsSystem of(String id) {
        for (StreamsSystem s : values()) {
            if (s.id.equals(id)) {
                return s;
            }
        }
        throw new IllegalArgumentException("no system " + id);
    }

    /** Puts this system's stores and options into the application's configuration. */
    abstract void configure(Properties props, StreamsWorkload w);

    /** What the report lists of its configuration. */
    abstract String settings(StreamsWorkload w);

    /**
     * The start of the oldest window whose bytes are still on disk (Long.MAX_VALUE: none). For RocksDB
     * the oldest segment directory: its name is the start of the time it holds.
     */
    long oldestOnDisk(KafkaStreams streams, Path stateDir) {
        try (Stream<Path> s = Files.walk(stateDir)) {
            return s.map(p -> SEGMENT.matcher(p.getFileName().toString())).filter(Matcher::matches)
                    .mapToLong(m -> Long.parseLong(m.group(1))).min().orElse(Long.MAX_VALUE);
        } catch (IOException | UncheckedIOException e) {
            return Long.MAX_VALUE;  // changed while walking: the next sample sees it
        }
    }
}
