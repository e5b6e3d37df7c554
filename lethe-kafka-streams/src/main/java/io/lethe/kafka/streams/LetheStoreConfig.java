package io.lethe.kafka.streams;

import io.lethe.engine.ColumnFamilyOptions;
import io.lethe.engine.Compression;
import io.lethe.engine.DbOptions;
import io.lethe.engine.MemoryBudget;

import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigDef.Importance;
import org.apache.kafka.common.config.ConfigDef.Type;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.streams.StreamsConfig;

import java.time.Duration;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The options of Lethe's stores, read from the application's configuration under the {@code lethe.}
 * prefix, then handed to the {@link LetheConfigSetter} named by {@link #CONFIG_SETTER}, if any. A bad
 * value fails with a {@link ConfigException} naming its key.
 */
public final class LetheStoreConfig {
    public static final String PREFIX = "lethe.";

    public static final String WRITE_BUFFER_BYTES = PREFIX + "write.buffer.bytes";
    public static final String PAGE_CACHE_BYTES = PREFIX + "page.cache.bytes";
    public static final String COMPRESSION = PREFIX + "compression";
    public static final String BOTTOMMOST_COMPRESSION = PREFIX + "bottommost.compression";
    public static final String FLUSH_COMPRESSION = PREFIX + "flush.compression";
    public static final String DELETE_PERSISTENCE_THRESHOLD_MS = PREFIX + "delete.persistence.threshold.ms";
    public static final String WAL = PREFIX + "wal";
    public static final String COMPACT_IN_MEMORY = PREFIX + "compact.in.memory";
    public static final String CONFIG_SETTER = PREFIX + "config.setter";
    public static final String MEMORY_BUDGET_BYTES = PREFIX + "memory.budget.bytes";
    public static final String MEMORY_WRITE_BUFFER_RATIO = PREFIX + "memory.write.buffer.ratio";
    public static final String MEMORY_BOUND_OPEN_TABLES = PREFIX + "memory.bound.open.tables";

    /** Smallest shared budget: below it the engines could not make progress. */
    static final long MIN_BUDGET_BYTES = 4L << 20;
    /** Smallest write buffer a store gets from a shared budget. */
    private static final long MIN_WRITE_BUFFER_BYTES = 1L << 20;

    /**
     * Compression of key-value stores' pages when {@link #COMPRESSION} is unset: they are read at
     * random, so pages decompress fast.
     */
    public static final Compression KEY_VALUE_COMPRESSION = Compression.LZ4;
    /**
     * Compression of window and session stores' pages when {@link #COMPRESSION} is unset. Their entries
     * are written once per commit, read while their window is open (mostly from the record cache and
     * memtable), then kept until retention ends: ZSTD's smaller pages cost no throughput there (a windowed
     * count kept 20 minutes: records/s even with LZ4's, two thirds of its disk).
     */
    public static final Compression WINDOWED_COMPRESSION = Compression.ZSTD;

    private static final String[] COMPRESSIONS =
            Arrays.stream(Compression.values()).map(Enum::name).toArray(String[]::new);

    static final ConfigDef DEFINITION = new ConfigDef()
            .define(WRITE_BUFFER_BYTES, Type.LONG, 16L << 20, ConfigDef.Range.between(64L << 10, 1L << 40),
                    Importance.MEDIUM, "Memtable size of each store before it is written to a file.")
            .define(PAGE_CACHE_BYTES, Type.LONG, 16L << 20, ConfigDef.Range.atLeast(0),
                    Importance.MEDIUM, "Cache of uncompressed pages of each store; 0 for none.")
            .define(COMPRESSION, Type.STRING, null, nullOr(COMPRESSIONS), Importance.LOW,
                    "Compression of data pages: LZ4, ZSTD or NONE; unset: " + KEY_VALUE_COMPRESSION
                            + " for key-value stores, " + WINDOWED_COMPRESSION + " for window and session stores.")
            .define(BOTTOMMOST_COMPRESSION, Type.STRING, null, nullOr(COMPRESSIONS), Importance.LOW,
                    "Compression of the last level, where most data lives; unset: as " + COMPRESSION + ".")
            .define(FLUSH_COMPRESSION, Type.STRING, null, nullOr(COMPRESSIONS), Importance.LOW,
                    "Compression of the level-0 files flushes write, which compaction soon rewrites; unset: as "
                            + COMPRESSION + ".")
            .define(DELETE_PERSISTENCE_THRESHOLD_MS, Type.LONG, Duration.ofHours(1).toMillis(),
                    ConfigDef.Range.atLeast(0), Importance.MEDIUM,
                    "Every deleted, overwritten and expired entry is physically gone from the store's files"
                            + " within this time (FADE compaction); 0 turns it off.")
            .define(WAL, Type.BOOLEAN, false, Importance.LOW,
                    "Whether each store keeps a write-ahead log. Off, as Kafka Streams runs its RocksDB stores: the"
                            + " changelog restores what a crash lost, and a flush writes the memtables out. On, a"
                            + " flush only syncs the log, at the cost of writing everything twice.")
            .define(COMPACT_IN_MEMORY, Type.BOOLEAN, false, Importance.LOW,
                    "Whether a flush may keep what survives its rewrite rules in memory instead of writing a"
                            + " file (without a write-ahead log only). Off: the stores flush at every commit and"
                            + " keep their windows for the whole retention, so survivors would stay in memory"
                            + " (measured: 15 MiB more native memory per task for a windowed count, records/s"
                            + " even).")
            .define(CONFIG_SETTER, Type.CLASS, null, Importance.LOW,
                    "A " + LetheConfigSetter.class.getName() + " that adjusts each store's options.")
            .define(MEMORY_BUDGET_BYTES, Type.LONG, 0L, zeroOrAtLeast(MIN_BUDGET_BYTES), Importance.MEDIUM,
                    "One memory budget for every Lethe store of the application in this JVM (all tasks and"
                            + " stream threads): one page cache, with write buffers and open tables' index and"
                            + " filters counted against it. 0: none, each store has its own write buffer and page"
                            + " cache.")
            .define(MEMORY_WRITE_BUFFER_RATIO, Type.DOUBLE, 0.5, openUnitInterval(), Importance.LOW,
                    "With a budget: the share the write buffers of all stores may take together, in (0, 1); past"
                            + " it, the store holding the largest memtable flushes it.")
            .define(MEMORY_BOUND_OPEN_TABLES, Type.BOOLEAN, false, Importance.LOW,
                    "With a budget: keep open tables' index and filters within it (tables past their share go"
                            + " through a table cache bounded by bytes and are opened again when they left it).");

    private final DbOptions.Builder db;
    private final ColumnFamilyOptions.Builder family;
    private SharedBudgets.Key budget;

    private LetheStoreConfig(DbOptions.Builder db, ColumnFamilyOptions.Builder family) {
        this.db = db;
        this.family = family;
    }

    /** The options of key-value store {@code storeName} from the application's configuration. */
    public static LetheStoreConfig from(String storeName, Map<String, ?> appConfigs) {
        return from(storeName, appConfigs, KEY_VALUE_COMPRESSION);
    }

    /**
     * The options of store {@code storeName} from the application's configuration, its pages compressed
     * with {@code unsetCompression} unless {@link #COMPRESSION} says otherwise.
     */
    public static LetheStoreConfig from(String storeName, Map<String, ?> appConfigs, Compression unsetCompression) {
        Map<String, Object> ours = new HashMap<>();
        appConfigs.forEach((k, v) -> {
            if (k.startsWith(PREFIX)) {
                ours.put(k, v);
            }
        });
        AbstractConfig parsed = new AbstractConfig(DEFINITION, ours, false);
        LetheStoreConfig config =
                new LetheStoreConfig(DbOptions.builder(), ColumnFamilyOptions.builder());
        config.apply(parsed, unsetCompression);
        long budgetBytes = parsed.getLong(MEMORY_BUDGET_BYTES);
        if (budgetBytes > 0) {
            String application = String.valueOf(appConfigs.get(StreamsConfig.APPLICATION_ID_CONFIG));
            config.budget = new SharedBudgets.Key(application, budgetBytes,
                    parsed.getDouble(MEMORY_WRITE_BUFFER_RATIO), parsed.getBoolean(MEMORY_BOUND_OPEN_TABLES));
        }
        Class<?> setter = parsed.getClass(CONFIG_SETTER);
        if (setter != null) {
            if (!LetheConfigSetter.class.isAssignableFrom(setter)) {
                throw new ConfigException(CONFIG_SETTER, setter.getName(),
                        "not a " + LetheConfigSetter.class.getName());
            }
            LetheConfigSetter instance = (LetheConfigSetter) Utils.newInstance(setter);
            // A copy the setter cannot change; not Map.copyOf, which refuses the null values that
            // Kafka Streams' configuration holds for unset options.
            instance.setConfig(storeName, config.db, config.family,
                    Collections.unmodifiableMap(new HashMap<>(appConfigs)));
        }
        return config;
    }

    /** The engine options, with the column family options as the default family's. */
    public DbOptions dbOptions() {
        return db.defaultColumnFamilyOptions(family.build()).build();
    }

    /** The shared memory budget the store's engine opens on, or null for none. */
    SharedBudgets.Key budget() {
        return budget;
    }

    /**
     * The engine options on a shared budget: its page cache, and write buffers up to the budget's
     * write-buffer share (one store may use all of it).
     */
    DbOptions dbOptions(MemoryBudget shared) {
        long writeBuffers = (long) (shared.capacityBytes() * budget.writeBufferRatio());
        return db.memoryBudget(shared).writeBufferSizeBytes(Math.max(MIN_WRITE_BUFFER_BYTES, writeBuffers))
                .defaultColumnFamilyOptions(family.build()).build();
    }

    private void apply(AbstractConfig parsed, Compression unsetCompression) {
        db.useWal(parsed.getBoolean(WAL));
        db.compactInMemory(parsed.getBoolean(COMPACT_IN_MEMORY));
        set(WRITE_BUFFER_BYTES, parsed.getLong(WRITE_BUFFER_BYTES), db::writeBufferSizeBytes);
        set(PAGE_CACHE_BYTES, parsed.getLong(PAGE_CACHE_BYTES), db::pageCacheBytes);
        String pages = parsed.getString(COMPRESSION);
        family.compression(pages == null ? unsetCompression : compression(pages));
        String bottom = parsed.getString(BOTTOMMOST_COMPRESSION);
        family.bottommostCompression(bottom == null ? null : compression(bottom));
        String flushed = parsed.getString(FLUSH_COMPRESSION);
        family.flushCompression(flushed == null ? null : compression(flushed));
        set(DELETE_PERSISTENCE_THRESHOLD_MS, Duration.ofMillis(parsed.getLong(DELETE_PERSISTENCE_THRESHOLD_MS)),
                family::deletePersistenceThreshold);
    }

    /** Hands value to the builder; a value it refuses fails naming key. */
    private static <T> void set(String key, T value, Consumer<T> builder) {
        try {
            builder.accept(value);
        } catch (IllegalArgumentException e) {
            throw new ConfigException(key, value, e.getMessage());
        }
    }

    private static Compression compression(String name) {
        return Compression.valueOf(name.toUpperCase(Locale.ROOT));
    }

    private static ConfigDef.Validator zeroOrAtLeast(long min) {
        return new ConfigDef.Validator() {
            @Override
            public void ensureValid(String name, Object value) {
                long v = (Long) value;
                if (v != 0 && v < min) {
                    throw new ConfigException(name, value, "0 (none) or at least " + min);
                }
            }

            @Override
            public String toString() {
                return "0 or at least " + min;
            }
        };
    }

    private static ConfigDef.Validator openUnitInterval() {
        return new ConfigDef.Validator() {
            @Override
            public void ensureValid(String name, Object value) {
                double v = (Double) value;
                if (!(v > 0 && v < 1)) {
                    throw new ConfigException(name, value, "a number in (0, 1)");
                }
            }

            @Override
            public String toString() {
                return "(0, 1)";
            }
        };
    }

    private static ConfigDef.Validator nullOr(String[] allowed) {
        ConfigDef.Validator valid = ConfigDef.CaseInsensitiveValidString.in(allowed);
        return new ConfigDef.Validator() {
            @Override
            public void ensureValid(String name, Object value) {
                if (value != null) {
                    valid.ensureValid(name, value);
                }
            }

            @Override
            public String toString() {
                return "null or " + valid;
            }
        };
    }

    @Override
    public String toString() {
        return String.format(Locale.ROOT, "LetheStoreConfig[%s]", dbOptions());
    }
}
