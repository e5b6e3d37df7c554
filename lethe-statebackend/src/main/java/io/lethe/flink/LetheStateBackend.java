package io.lethe.flink;

import io.lethe.engine.ColumnFamilyOptions;
import io.lethe.engine.MemoryBudget;
import io.lethe.engine.internal.NativeLibrary;
import io.lethe.flink.async.LetheAsyncKeyedStateBackend;
import io.lethe.flink.expiry.WindowExpiry;
import io.lethe.flink.timers.TimerQueueSettings;

import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.execution.Environment;
import org.apache.flink.runtime.memory.OpaqueMemoryResource;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.AsyncKeyedStateBackend;
import org.apache.flink.runtime.state.AbstractManagedMemoryStateBackend;
import org.apache.flink.runtime.state.ConfigurableStateBackend;
import org.apache.flink.runtime.state.DefaultOperatorStateBackendBuilder;
import org.apache.flink.runtime.state.OperatorStateBackend;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.util.List;
import java.util.UUID;

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
    private static final Logger LOG = LoggerFactory.getLogger(LetheStateBackend.class);

    private static final long serialVersionUID = 1L;

    /** Every option this backend reads, for copying explicit settings. */
    static final List<ConfigOption<?>> ALL_OPTIONS = List.of(
            LetheOptions.LOCAL_DIRECTORIES,
            LetheOptions.USE_MANAGED_MEMORY,
            LetheOptions.BOUND_OPEN_TABLES,
            LetheOptions.HEAP_TRIM_INTERVAL,
            LetheOptions.WRITE_BUFFER_RATIO,
            LetheOptions.WRITE_BUFFER_SIZE,
            LetheOptions.PAGE_CACHE_SIZE,
            LetheOptions.MAX_OPEN_FILES,
            LetheOptions.SIZE_RATIO,
            LetheOptions.PAGE_SIZE,
            LetheOptions.PAGES_PER_TILE,
            LetheOptions.TTL_PAGES_PER_TILE,
            LetheOptions.BLOOM_BITS_PER_KEY,
            LetheOptions.COMPRESSION,
            LetheOptions.BOTTOMMOST_COMPRESSION,
            LetheOptions.FLUSH_COMPRESSION,
            LetheOptions.TARGET_FILE_SIZE,
            LetheOptions.DYNAMIC_LEVEL_SIZE,
            LetheOptions.LEVEL1_SIZE,
            LetheOptions.VERIFY_CHECKSUMS,
            LetheOptions.DELETE_PERSISTENCE_THRESHOLD,
            LetheOptions.FADE_FILE_PICK,
            LetheOptions.AVOID_BLIND_DELETES,
            LetheOptions.COMPACT_IN_MEMORY,
            LetheOptions.WINDOW_EXPIRY,
            LetheOptions.WINDOW_COMPACTION,
            LetheOptions.TIMER_SERVICE_FACTORY,
            LetheOptions.TIMER_SERVICE_CACHE_SIZE,
            LetheOptions.TIMER_SERVICE_COUNT_PENDING,
            LetheOptions.TIMER_SERVICE_COMPRESSION,
            LetheOptions.CHECKPOINT_TRANSFER_THREADS,
            LetheOptions.CHECKPOINT_COPY_MEMTABLES,
            LetheOptions.ASYNC_STATE_EXECUTOR,
            LetheOptions.ASYNC_STATE_INLINE_BATCH_SIZE,
            LetheOptions.MULTI_GET_THREADS,
            CheckpointingOptions.INCREMENTAL_CHECKPOINTS);

    /** The explicitly set options; unset ones take their defaults. */
    private final Configuration settings;

    public LetheStateBackend() {
        this.settings = new Configuration();
    }

    private LetheStateBackend(LetheStateBackend original, ReadableConfig config) {
        this.settings = new Configuration();
        LetheOptions.checkKnownKeys(config, ALL_OPTIONS);
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
            return;
        }
        try {
            config.getOptional(option).ifPresent(v -> settings.set(option, v));
        } catch (IllegalArgumentException e) {
            // Flink's own parsing (a number, a size, a duration, an enum constant) failed.
            String detail = e.getCause() != null ? " " + e.getCause().getMessage() : "";
            throw new LetheConfigurationException(e.getMessage() + detail
                    + " See docs/configuration.md for the options of the Lethe state backend.", e);
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

    /** Whether checkpoints upload only the engine files that the last completed one did not. */
    public boolean isIncrementalCheckpointsEnabled() {
        return settings.get(CheckpointingOptions.INCREMENTAL_CHECKPOINTS);
    }

    /**
     * After a NO_CLAIM restore Flink's first checkpoint is a full one (sharing strategy FORWARD):
     * it uploads every file and references nothing of the restored checkpoint.
     */
    @Override
    public boolean supportsNoClaimRestoreMode() {
        return true;
    }

    /** Canonical savepoints (Flink's key-group format) and native ones (the engine's files). */
    @Override
    public boolean supportsSavepointFormat(SavepointFormatType formatType) {
        return true;
    }

    @Override
    public boolean useManagedMemory() {
        return settings.get(LetheOptions.USE_MANAGED_MEMORY);
    }

    @Override
    public boolean supportsAsyncKeyedStateBackend() {
        return settings.get(LetheOptions.ASYNC_STATE_EXECUTOR);
    }

    /** Operators with asynchronous state: their requests are served on a backend like the synchronous one. */
    @Override
    public <K> AsyncKeyedStateBackend<K> createAsyncKeyedStateBackend(KeyedStateBackendParameters<K> parameters)
            throws IOException {
        LetheKeyedStateBackend<K> storage = (LetheKeyedStateBackend<K>) createKeyedStateBackend(parameters);
        return new LetheAsyncKeyedStateBackend<>(storage, parameters.getEnv().getExecutionConfig(),
                parameters.getTtlTimeProvider(), settings.get(LetheOptions.ASYNC_STATE_INLINE_BATCH_SIZE),
                parameters.getOperatorIdentifier() + " " + parameters.getEnv().getTaskInfo().getTaskNameWithSubtasks(),
                parameters.getMetricGroup());
    }

    @Override
    public <K> AbstractKeyedStateBackend<K> createKeyedStateBackend(KeyedStateBackendParameters<K> parameters)
            throws IOException {
        Environment env = parameters.getEnv();
        try {
            NativeLibrary.ensureLoaded();
        } catch (IllegalStateException e) {
            throw new LetheConfigurationException("The Lethe state backend cannot load its native engine: "
                    + e.getMessage() + ". Put the lethe-native jar built for this platform on the TaskManagers'"
                    + " classpath (Flink's lib/ directory, beside lethe-statebackend).", e);
        }
        WindowExpiry window =
                WindowExpiry.detect(env, parameters.getOperatorIdentifier(), settings.get(LetheOptions.WINDOW_EXPIRY));
        File instanceBasePath = instanceDirectory(env, parameters.getJobID(), parameters.getOperatorIdentifier());
        OpaqueMemoryResource<MemoryBudget> memory = sharedMemory(env, parameters.getManagedMemoryFraction());
        try {
            long writeBufferBytes = settings.get(LetheOptions.WRITE_BUFFER_SIZE).getBytes();
            long pageCacheBytes = settings.get(LetheOptions.PAGE_CACHE_SIZE).getBytes();
            if (memory != null) {
                // The budget bounds all engines' write buffers; one engine may use all of them.
                writeBufferBytes = Math.max(MIN_WRITE_BUFFER_BYTES,
                        (long) (memory.getResourceHandle().capacityBytes()
                                * settings.get(LetheOptions.WRITE_BUFFER_RATIO)));
            }
            ColumnFamilyOptions columnFamilies = LetheOptions.columnFamilyOptions(settings);
            ColumnFamilyOptions timers = LetheOptions.timerColumnFamilyOptions(settings, columnFamilies);
            return new LetheKeyedStateBackendBuilder<>(parameters, instanceBasePath,
                    LetheOptions.dbOptions(settings, writeBufferBytes, pageCacheBytes,
                            memory == null ? null : memory.getResourceHandle()),
                    columnFamilies)
                    .setTtlColumnFamilyOptions(LetheOptions.ttlColumnFamilyOptions(settings, columnFamilies))
                    .setWindowColumnFamilyOptions(LetheOptions.windowColumnFamilyOptions(settings, columnFamilies))
                    .setTimerColumnFamilyOptions(timers)
                    .setSharedMemory(memory)
                    .setLatencyTracking(latencyTrackingConfigBuilder.setMetricGroup(parameters.getMetricGroup()).build())
                    .setSizeTracking(sizeTrackingConfigBuilder.setMetricGroup(parameters.getMetricGroup()).build())
                    .setIncrementalCheckpoints(isIncrementalCheckpointsEnabled())
                    .setWindowExpiry(window)
                    .setTimerService(settings.get(LetheOptions.TIMER_SERVICE_FACTORY), new TimerQueueSettings(
                            settings.get(LetheOptions.TIMER_SERVICE_CACHE_SIZE),
                            settings.get(LetheOptions.TIMER_SERVICE_COUNT_PENDING)))
                    .setTransferThreads(settings.get(LetheOptions.CHECKPOINT_TRANSFER_THREADS))
                    .setCopyMemtables(settings.get(LetheOptions.CHECKPOINT_COPY_MEMTABLES))
                    .build();
        } catch (IOException | RuntimeException e) {
            if (memory != null) {
                closeQuietly(memory);  // the build failed: no backend holds the lease
            }
            throw e;
        }
    }

    /**
     * The memory budget all Lethe engines of this slot share, reserved from its managed memory (as
     * Flink's RocksDB backend shares its cache and write buffer manager), or null when managed memory
     * is not used. Each engine holds a lease and gives it back when disposed; the budget goes with the
     * last lease.
     */
    private OpaqueMemoryResource<MemoryBudget> sharedMemory(Environment env, double fraction) throws IOException {
        if (!useManagedMemory() || fraction <= 0 || env.getMemoryManager() == null) {
            return null;
        }
        double ratio = settings.get(LetheOptions.WRITE_BUFFER_RATIO);
        boolean bound = settings.get(LetheOptions.BOUND_OPEN_TABLES);
        try {
            return env.getMemoryManager().getSharedMemoryResourceForManagedMemory(MANAGED_MEMORY_RESOURCE_ID,
                    size -> MemoryBudget.create(Math.max(size, MIN_BUDGET_BYTES), ratio, bound), fraction);
        } catch (Exception e) {
            throw new IOException("Could not reserve the Lethe engines' memory budget from the slot's managed"
                    + " memory (fraction " + fraction + ")", e);
        }
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception e) {
            LOG.warn("Could not give back the Lethe memory budget lease", e);
        }
    }

    /** The type under which the slot's memory manager keeps the shared budget. */
    static final String MANAGED_MEMORY_RESOURCE_ID = "state-lethe-managed-memory";

    /** Smallest budget: below it the engines could not make progress (the budget may exceed a tiny slot). */
    private static final long MIN_BUDGET_BYTES = 4L << 20;

    /** Smallest write buffer and cache the engine gets from managed memory. */
    private static final long MIN_WRITE_BUFFER_BYTES = 1 << 20;

    /** A fresh directory for one engine: job, operator and a random id, under a local directory. */
    private File instanceDirectory(Environment env, JobID jobId, String operatorIdentifier) throws IOException {
        List<String> configured = settings.getOptional(LetheOptions.LOCAL_DIRECTORIES).orElse(null);
        File[] roots;
        if (configured != null && !configured.isEmpty()) {
            roots = configured.stream().map(File::new).toArray(File[]::new);
        } else {
            roots = env.getIOManager().getSpillingDirectories();
        }
        File root = roots[Math.floorMod(operatorIdentifier.hashCode(), roots.length)];
        String where = configured != null && !configured.isEmpty()
                ? "set " + LetheOptions.LOCAL_DIRECTORIES.key() + " to writable local directories"
                : "set " + LetheOptions.LOCAL_DIRECTORIES.key() + " (or the TaskManager's io.tmp.dirs) to writable"
                        + " local directories";
        if (!root.isDirectory() && !root.mkdirs() && !root.isDirectory()) {
            throw new LetheConfigurationException("The Lethe local directory " + root + " does not exist and cannot be"
                    + " created" + fileInTheWay(root) + ": " + where + ".");
        }
        if (!Files.isWritable(root.toPath())) {
            throw new LetheConfigurationException("The Lethe local directory " + root + " is not writable: " + where
                    + ".");
        }
        String name = "job_" + jobId + "_op_" + operatorIdentifier.replaceAll("[^a-zA-Z0-9\\-]", "_") + "_uuid_"
                + UUID.randomUUID();
        File dir = new File(root, name);
        try {
            Files.createDirectory(dir.toPath());
        } catch (IOException e) {
            String reason = e instanceof java.nio.file.FileSystemException fse && fse.getReason() != null
                    ? fse.getReason() : e.toString();
            if (reason.contains("No space left")) {
                throw new IOException("Cannot create the Lethe working directory " + dir + ": " + reason, e);
            }
            // Permissions, a read-only file system, a special file system: restarting changes nothing.
            throw new LetheConfigurationException("Cannot create a directory in the Lethe local directory " + root
                    + " (" + reason + "): " + where + ".", e);
        }
        return dir;
    }

    /** " (X is a file)" if the path or one of its parents is a file, else "". */
    private static String fileInTheWay(File path) {
        for (File p = path; p != null; p = p.getParentFile()) {
            if (p.exists()) {
                return p.isDirectory() ? "" : " (" + p + " is a file)";
            }
        }
        return "";
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
