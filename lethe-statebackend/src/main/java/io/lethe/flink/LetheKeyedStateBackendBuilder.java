package io.lethe.flink;

import io.lethe.engine.ColumnFamilyOptions;
import io.lethe.engine.DbOptions;
import io.lethe.engine.LetheDb;
import io.lethe.flink.expiry.ExpiryDriver;
import io.lethe.flink.expiry.WindowExpiry;
import io.lethe.flink.restore.LetheFullRestore;
import io.lethe.flink.restore.LetheNativeRestore;
import io.lethe.flink.restore.RestoredStates;
import io.lethe.flink.snapshot.CheckpointFile;
import io.lethe.flink.snapshot.FileTransfer;
import io.lethe.flink.snapshot.LetheNativeSnapshotStrategy;
import io.lethe.flink.state.StateRegistry;
import io.lethe.flink.timers.EngineTimerQueues;
import io.lethe.flink.timers.TimerQueueSettings;

import org.apache.flink.api.common.ExecutionConfig;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.runtime.state.AbstractStateBackend;
import org.apache.flink.runtime.state.BackendBuildingException;
import org.apache.flink.runtime.state.CompositeKeySerializationUtils;
import org.apache.flink.runtime.state.HeapPriorityQueuesManager;
import org.apache.flink.runtime.state.IncrementalKeyedStateHandle;
import org.apache.flink.runtime.state.IncrementalLocalKeyedStateHandle;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.InternalKeyContextImpl;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.StateBackend.KeyedStateBackendParameters;
import org.apache.flink.runtime.state.StateSerializerProvider;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueSetFactory;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueSnapshotRestoreWrapper;
import org.apache.flink.runtime.state.metrics.LatencyTrackingStateConfig;
import org.apache.flink.runtime.state.metrics.SizeTrackingStateConfig;
import org.apache.flink.util.FileUtils;

import java.io.File;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.UUID;

/**
 * Builds the keyed backend of one operator subtask: opens the engine in its working directory,
 * restores the state handles into it (native checkpoints by their files, canonical savepoints
 * entry by entry) and assembles the backend around it. A failed build leaves nothing behind.
 */
public final class LetheKeyedStateBackendBuilder<K> {
    /** Heap timer queues start with room for this many timers per key group. */
    private static final int TIMER_QUEUE_INITIAL_CAPACITY = 128;

    private final KeyedStateBackendParameters<K> parameters;
    private final File instanceBasePath;
    private final DbOptions dbOptions;
    private AutoCloseable sharedMemory;
    private final ColumnFamilyOptions columnFamilyOptions;
    private ColumnFamilyOptions ttlColumnFamilyOptions;
    private ColumnFamilyOptions windowColumnFamilyOptions;
    private ColumnFamilyOptions timerColumnFamilyOptions;
    private LatencyTrackingStateConfig latencyTracking = LatencyTrackingStateConfig.disabled();
    private SizeTrackingStateConfig sizeTracking = SizeTrackingStateConfig.disabled();
    private boolean incrementalCheckpoints = true;
    private WindowExpiry window = WindowExpiry.none();
    private LetheOptions.TimerServiceFactory timerService = LetheOptions.TimerServiceFactory.LETHE;
    private TimerQueueSettings timerSettings =
            new TimerQueueSettings(LetheOptions.TIMER_SERVICE_CACHE_SIZE.defaultValue(), false);
    private int transferThreads = LetheOptions.CHECKPOINT_TRANSFER_THREADS.defaultValue();
    private boolean copyMemtables = LetheOptions.CHECKPOINT_COPY_MEMTABLES.defaultValue();

    /**
     * @param instanceBasePath the engine's fresh working directory; deleted when the build fails
     *     and when the backend is disposed
     */
    public LetheKeyedStateBackendBuilder(KeyedStateBackendParameters<K> parameters, File instanceBasePath,
            DbOptions dbOptions, ColumnFamilyOptions columnFamilyOptions) {
        this.parameters = parameters;
        this.instanceBasePath = instanceBasePath;
        this.dbOptions = dbOptions;
        this.columnFamilyOptions = columnFamilyOptions;
        this.ttlColumnFamilyOptions = columnFamilyOptions;
        this.windowColumnFamilyOptions = columnFamilyOptions;
        this.timerColumnFamilyOptions = columnFamilyOptions;
    }

    /**
     * The options of the column family of window contents while the horizon follows the windows (by default
     * those of every other state).
     */
    public LetheKeyedStateBackendBuilder<K> setWindowColumnFamilyOptions(ColumnFamilyOptions options) {
        this.windowColumnFamilyOptions = options;
        return this;
    }

    /** The options of the column families of states with a TTL (by default those of every other). */
    public LetheKeyedStateBackendBuilder<K> setTtlColumnFamilyOptions(ColumnFamilyOptions options) {
        this.ttlColumnFamilyOptions = options;
        return this;
    }

    /** The options of the column families of timer queues kept in the engine (by default those of states). */
    public LetheKeyedStateBackendBuilder<K> setTimerColumnFamilyOptions(ColumnFamilyOptions options) {
        this.timerColumnFamilyOptions = options;
        return this;
    }

    /**
     * The lease on the slot's shared memory budget the engine opens on (null: none). The built backend
     * gives it back when disposed; if the build fails, the caller gives it back.
     */
    public LetheKeyedStateBackendBuilder<K> setSharedMemory(AutoCloseable lease) {
        this.sharedMemory = lease;
        return this;
    }

    public LetheKeyedStateBackendBuilder<K> setLatencyTracking(LatencyTrackingStateConfig config) {
        this.latencyTracking = config;
        return this;
    }

    public LetheKeyedStateBackendBuilder<K> setSizeTracking(SizeTrackingStateConfig config) {
        this.sizeTracking = config;
        return this;
    }

    public LetheKeyedStateBackendBuilder<K> setIncrementalCheckpoints(boolean incremental) {
        this.incrementalCheckpoints = incremental;
        return this;
    }

    /** The window operator this backend serves, if any, and whether its contents expire by horizon. */
    public LetheKeyedStateBackendBuilder<K> setWindowExpiry(WindowExpiry window) {
        this.window = window;
        return this;
    }

    /** Where timers are kept, and how the engine's queues run. */
    public LetheKeyedStateBackendBuilder<K> setTimerService(LetheOptions.TimerServiceFactory factory,
            TimerQueueSettings settings) {
        this.timerService = factory;
        this.timerSettings = settings;
        return this;
    }

    /**
     * Whether native checkpoints copy the memtables instead of flushing them ({@link
     * LetheOptions#CHECKPOINT_COPY_MEMTABLES}).
     */
    public LetheKeyedStateBackendBuilder<K> setCopyMemtables(boolean copy) {
        this.copyMemtables = copy;
        return this;
    }

    /** How many of a checkpoint's files are uploaded, and of a restore's downloaded, at a time. */
    public LetheKeyedStateBackendBuilder<K> setTransferThreads(int threads) {
        this.transferThreads = threads;
        return this;
    }

    /** What the restore produced: the engine, and what incremental checkpoints go on from. */
    private record Restored(LetheDb db, UUID backendUid, SortedMap<Long, List<CheckpointFile>> tables,
            long checkpointId) {}

    /** Restores and assembles the backend; on failure closes the engine and deletes its directory. */
    public LetheKeyedStateBackend<K> build() throws IOException {
        KeyGroupRange range = parameters.getKeyGroupRange();
        int numberOfKeyGroups = parameters.getNumberOfKeyGroups();
        StateRegistry states = new StateRegistry(columnFamilyOptions, ttlColumnFamilyOptions, windowColumnFamilyOptions,
                window);
        Map<String, HeapPriorityQueueSnapshotRestoreWrapper<?>> queues = new HashMap<>();
        HeapPriorityQueueSetFactory queueFactory =
                new HeapPriorityQueueSetFactory(range, numberOfKeyGroups, TIMER_QUEUE_INITIAL_CAPACITY);
        StateSerializerProvider<K> keySerializerProvider =
                StateSerializerProvider.fromNewRegisteredSerializer(parameters.getKeySerializer());
        Restored restored = null;
        FileTransfer transfer = new FileTransfer(transferThreads);
        try {
            RestoredStates restoredStates = new RestoredStates(range, numberOfKeyGroups, states, queues, queueFactory,
                    window, timerService == LetheOptions.TimerServiceFactory.LETHE);
            restored = restore(restoredStates, keySerializerProvider, transfer);
            return assemble(restored, states, new HeapPriorityQueuesManager(queues, queueFactory, range,
                    numberOfKeyGroups), engineTimers(restored.db(), restoredStates), keySerializerProvider, transfer);
        } catch (Exception e) {
            // Nothing of a failed attempt may stay behind: Flink retries with other state handles.
            transfer.close();
            if (restored != null) {
                restored.db().close();
            }
            FileUtils.deleteDirectoryQuietly(instanceBasePath);
            if (e instanceof IOException) {
                throw (IOException) e;
            }
            throw new BackendBuildingException("Failed to build the Lethe keyed state backend", e);
        }
    }

    /** Opens the engine with the state handles' contents: native files, canonical entries or nothing. */
    private Restored restore(RestoredStates restored, StateSerializerProvider<K> keySerializerProvider,
            FileTransfer transfer) throws Exception {
        List<IncrementalKeyedStateHandle> nativeHandles = new ArrayList<>();
        List<KeyedStateHandle> otherHandles = new ArrayList<>();
        for (KeyedStateHandle h : parameters.getStateHandles()) {
            // In the checkpoint storage, or local recovery's copy on this TaskManager.
            if (h instanceof IncrementalRemoteKeyedStateHandle || h instanceof IncrementalLocalKeyedStateHandle) {
                nativeHandles.add((IncrementalKeyedStateHandle) h);
            } else if (h != null) {
                otherHandles.add(h);
            }
        }
        File dbDirectory = new File(instanceBasePath, "db");
        if (!nativeHandles.isEmpty()) {
            if (!otherHandles.isEmpty()) {
                throw new IllegalStateException("Cannot restore native and canonical snapshots together: "
                        + otherHandles.get(0).getClass().getSimpleName());
            }
            LetheNativeRestore<K> restore = new LetheNativeRestore<>(instanceBasePath, dbOptions, restored,
                    userClassLoader(), keySerializerProvider, parameters.getCancelStreamRegistry(), transfer);
            LetheDb db = restore.restore(nativeHandles, dbDirectory);
            return new Restored(db, restore.backendUid(), restore.restoredTables(), restore.restoredCheckpointId());
        }
        LetheDb db = LetheDb.open(dbDirectory.getAbsolutePath(), dbOptions);
        Restored result = new Restored(db, UUID.randomUUID(), Collections.emptySortedMap(), -1);
        if (!otherHandles.isEmpty()) {
            try {
                new LetheFullRestore<K>(db, restored).restore(otherHandles, userClassLoader(), keySerializerProvider);
            } catch (Exception e) {
                db.close();
                throw e;
            }
        }
        return result;
    }

    /** The timer queues kept in the engine, with those restored registered (null with heap timers). */
    private EngineTimerQueues engineTimers(LetheDb db, RestoredStates restored) {
        if (timerService != LetheOptions.TimerServiceFactory.LETHE) {
            return null;
        }
        KeyGroupRange range = parameters.getKeyGroupRange();
        int numberOfKeyGroups = parameters.getNumberOfKeyGroups();
        EngineTimerQueues timers = new EngineTimerQueues(db, timerColumnFamilyOptions, range, numberOfKeyGroups,
                CompositeKeySerializationUtils.computeRequiredBytesInKeyGroupPrefix(numberOfKeyGroups), timerSettings,
                restored.engineQueueRecords());
        restored.engineQueues().forEach(timers::registerRestored);
        return timers;
    }

    private LetheKeyedStateBackend<K> assemble(Restored restored, StateRegistry states,
            HeapPriorityQueuesManager queues, EngineTimerQueues engineTimers,
            StateSerializerProvider<K> keySerializerProvider, FileTransfer transfer) {
        KeyGroupRange range = parameters.getKeyGroupRange();
        LetheNativeSnapshotStrategy<K> snapshots = new LetheNativeSnapshotStrategy<>(restored.db(), instanceBasePath,
                keySerializerProvider.currentSchemaSerializer(), states::all,
                () -> queues.getRegisteredPQStates().values(), range, restored.backendUid(), incrementalCheckpoints,
                copyMemtables, restored.tables(), restored.checkpointId(), window::record, engineTimers, transfer,
                parameters.getEnv().getTaskStateManager().createLocalRecoveryConfig());
        ExpiryDriver expiryDriver = new ExpiryDriver(restored.db(), parameters.getTtlTimeProvider(),
                columnFamilyOptions.deletePersistenceThreshold());
        ExecutionConfig executionConfig = parameters.getEnv().getExecutionConfig();
        MetricGroup metricGroup = parameters.getMetricGroup();
        return new LetheKeyedStateBackend<>(parameters.getKvStateRegistry(),
                keySerializerProvider.currentSchemaSerializer(), userClassLoader(), executionConfig,
                parameters.getTtlTimeProvider(), latencyTracking, sizeTracking,
                // The parameters' registry guards the restore only and is closed once the backend
                // is built; the backend's snapshots need a registry of their own.
                new CloseableRegistry(), AbstractStateBackend.getCompressionDecorator(executionConfig),
                new InternalKeyContextImpl<>(range, parameters.getNumberOfKeyGroups()),
                new LetheKeyedStateBackend.Engine<>(restored.db(), instanceBasePath, states, queues, engineTimers,
                        snapshots, expiryDriver, window, sharedMemory, transfer),
                metricGroup);
    }

    private ClassLoader userClassLoader() {
        return parameters.getEnv().getUserCodeClassLoader().asClassLoader();
    }
}
