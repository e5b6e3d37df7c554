package io.lethe.flink;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.AbstractManagedMemoryStateBackend;
import org.apache.flink.runtime.state.ConfigurableStateBackend;
import org.apache.flink.runtime.state.DefaultOperatorStateBackendBuilder;
import org.apache.flink.runtime.state.OperatorStateBackend;

import java.io.IOException;
import java.util.List;

/**
 * The Lethe state backend: keyed state in Lethe's native LSM engine, one engine per keyed
 * operator subtask and one column family per state.
 *
 * <p>Cheap to create and to configure: Flink instantiates it for every task and on the
 * JobManager, so nothing here touches native code. The engine opens lazily in {@link
 * #createKeyedStateBackend}.
 *
 * <p>Settings come from the Flink configuration ({@link LetheOptions}); values already held by
 * this object take precedence over the configuration it is configured with, as in Flink's other
 * backends.
 */
public class LetheStateBackend extends AbstractManagedMemoryStateBackend implements ConfigurableStateBackend {
    private static final long serialVersionUID = 1L;

    /** Every option this backend reads, for copying explicit settings. */
    static final List<ConfigOption<?>> ALL_OPTIONS = List.of(
            LetheOptions.LOCAL_DIRECTORIES,
            LetheOptions.USE_MANAGED_MEMORY,
            LetheOptions.WRITE_BUFFER_RATIO,
            LetheOptions.WRITE_BUFFER_SIZE,
            LetheOptions.PAGE_CACHE_SIZE,
            LetheOptions.SIZE_RATIO,
            LetheOptions.PAGE_SIZE,
            LetheOptions.PAGES_PER_TILE,
            LetheOptions.BLOOM_BITS_PER_KEY,
            LetheOptions.TARGET_FILE_SIZE,
            LetheOptions.LEVEL1_SIZE,
            LetheOptions.VERIFY_CHECKSUMS);

    /** The explicitly set options; unset ones take their defaults. */
    private final Configuration settings;

    public LetheStateBackend() {
        this.settings = new Configuration();
    }

    private LetheStateBackend(LetheStateBackend original, ReadableConfig config) {
        this.settings = new Configuration();
        for (ConfigOption<?> option : ALL_OPTIONS) {
            copy(option, original.settings, config);
        }
        LetheOptions.validate(settings);
        this.latencyTrackingConfigBuilder = original.latencyTrackingConfigBuilder.configure(config);
        this.sizeTrackingConfigBuilder = original.sizeTrackingConfigBuilder.configure(config);
    }

    private <T> void copy(ConfigOption<T> option, Configuration original, ReadableConfig config) {
        if (original.contains(option)) {
            settings.set(option, original.get(option));
        } else {
            config.getOptional(option).ifPresent(v -> settings.set(option, v));
        }
    }

    @Override
    public LetheStateBackend configure(ReadableConfig config, ClassLoader classLoader) {
        return new LetheStateBackend(this, config);
    }

    /** The effective value of an option (explicit setting or default). */
    public <T> T get(ConfigOption<T> option) {
        return settings.get(option);
    }

    /** A copy with one option set explicitly (it then wins over the cluster configuration). */
    public <T> LetheStateBackend with(ConfigOption<T> option, T value) {
        LetheStateBackend copy = new LetheStateBackend(this, new Configuration());
        copy.settings.set(option, value);
        LetheOptions.validate(copy.settings);
        return copy;
    }

    @Override
    public String getName() {
        return "LetheStateBackend";
    }

    @Override
    public boolean useManagedMemory() {
        return settings.get(LetheOptions.USE_MANAGED_MEMORY);
    }

    @Override
    public <K> AbstractKeyedStateBackend<K> createKeyedStateBackend(KeyedStateBackendParameters<K> parameters)
            throws IOException {
        // The keyed backend (states, timers, snapshots, restore) is being built in issue 4; until
        // it lands, a job configured with Lethe fails here with a message that says so.
        throw new UnsupportedOperationException(
                "The Lethe keyed state backend is not available in this build yet: configure"
                        + " state.backend.type: hashmap or rocksdb until it is released.");
    }

    @Override
    public OperatorStateBackend createOperatorStateBackend(OperatorStateBackendParameters parameters)
            throws Exception {
        // Operator state is small and list-shaped; Flink's default backend holds it, as for RocksDB.
        return new DefaultOperatorStateBackendBuilder(
                        parameters.getEnv().getUserCodeClassLoader().asClassLoader(),
                        parameters.getEnv().getExecutionConfig(),
                        true,
                        parameters.getStateHandles(),
                        parameters.getCancelStreamRegistry())
                .build();
    }

    @Override
    public String toString() {
        return "LetheStateBackend{" + settings.toMap() + "}";
    }
}
