package io.lethe.kafka.streams;

import io.lethe.engine.ColumnFamilyOptions;
import io.lethe.engine.Compression;
import io.lethe.engine.DbOptions;

import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigDef.Importance;
import org.apache.kafka.common.config.ConfigDef.Type;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.utils.Utils;

import java.time.Duration;
import java.util.Arrays;
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
    public static final String DELETE_PERSISTENCE_THRESHOLD_MS = PREFIX + "delete.persistence.threshold.ms";
    public static final String CONFIG_SETTER = PREFIX + "config.setter";

    private static final String[] COMPRESSIONS =
            Arrays.stream(Compression.values()).map(Enum::name).toArray(String[]::new);

    static final ConfigDef DEFINITION = new ConfigDef()
            .define(WRITE_BUFFER_BYTES, Type.LONG, 16L << 20, ConfigDef.Range.between(64L << 10, 1L << 40),
                    Importance.MEDIUM, "Memtable size of each store before it is written to a file.")
            .define(PAGE_CACHE_BYTES, Type.LONG, 16L << 20, ConfigDef.Range.atLeast(0),
                    Importance.MEDIUM, "Cache of uncompressed pages of each store; 0 for none.")
            .define(COMPRESSION, Type.STRING, Compression.LZ4.name(),
                    ConfigDef.CaseInsensitiveValidString.in(COMPRESSIONS),
                    Importance.LOW, "Compression of data pages: LZ4, ZSTD or NONE.")
            .define(BOTTOMMOST_COMPRESSION, Type.STRING, null, nullOr(COMPRESSIONS), Importance.LOW,
                    "Compression of the last level, where most data lives; unset: as " + COMPRESSION + ".")
            .define(DELETE_PERSISTENCE_THRESHOLD_MS, Type.LONG, Duration.ofHours(1).toMillis(),
                    ConfigDef.Range.atLeast(0), Importance.MEDIUM,
                    "Every deleted, overwritten and expired entry is physically gone from the store's files"
                            + " within this time (FADE compaction); 0 turns it off.")
            .define(CONFIG_SETTER, Type.CLASS, null, Importance.LOW,
                    "A " + LetheConfigSetter.class.getName() + " that adjusts each store's options.");

    private final DbOptions.Builder db;
    private final ColumnFamilyOptions.Builder family;

    private LetheStoreConfig(DbOptions.Builder db, ColumnFamilyOptions.Builder family) {
        this.db = db;
        this.family = family;
    }

    /** The options of store {@code storeName} from the application's configuration. */
    public static LetheStoreConfig from(String storeName, Map<String, ?> appConfigs) {
        Map<String, Object> ours = new HashMap<>();
        appConfigs.forEach((k, v) -> {
            if (k.startsWith(PREFIX)) {
                ours.put(k, v);
            }
        });
        AbstractConfig parsed = new AbstractConfig(DEFINITION, ours, false);
        LetheStoreConfig config =
                new LetheStoreConfig(DbOptions.builder().useWal(true), ColumnFamilyOptions.builder());
        config.apply(parsed);
        Class<?> setter = parsed.getClass(CONFIG_SETTER);
        if (setter != null) {
            if (!LetheConfigSetter.class.isAssignableFrom(setter)) {
                throw new ConfigException(CONFIG_SETTER, setter.getName(),
                        "not a " + LetheConfigSetter.class.getName());
            }
            LetheConfigSetter instance = (LetheConfigSetter) Utils.newInstance(setter);
            instance.setConfig(storeName, config.db, config.family, Map.copyOf(appConfigs));
        }
        return config;
    }

    /** The engine options, with the column family options as the default family's. */
    public DbOptions dbOptions() {
        return db.defaultColumnFamilyOptions(family.build()).build();
    }

    private void apply(AbstractConfig parsed) {
        set(WRITE_BUFFER_BYTES, parsed.getLong(WRITE_BUFFER_BYTES), db::writeBufferSizeBytes);
        set(PAGE_CACHE_BYTES, parsed.getLong(PAGE_CACHE_BYTES), db::pageCacheBytes);
        family.compression(compression(parsed.getString(COMPRESSION)));
        String bottom = parsed.getString(BOTTOMMOST_COMPRESSION);
        family.bottommostCompression(bottom == null ? null : compression(bottom));
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
