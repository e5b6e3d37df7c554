package io.lethe.flink;

import io.lethe.engine.ColumnFamilyHandle;
import io.lethe.engine.LetheDb;
import io.lethe.engine.LetheException;
import io.lethe.flink.expiry.ExpiryDriver;
import io.lethe.flink.expiry.PolledTimerQueue;
import io.lethe.flink.expiry.StateExpiry;
import io.lethe.flink.expiry.WindowExpiry;
import io.lethe.flink.snapshot.FileTransfer;
import io.lethe.flink.snapshot.LetheFullSnapshotResources;
import io.lethe.flink.snapshot.LetheNativeSnapshotStrategy;
import io.lethe.flink.state.AbstractLetheState;
import io.lethe.flink.state.LetheStateContext;
import io.lethe.flink.state.RegisteredState;
import io.lethe.flink.state.StateFactory;
import io.lethe.flink.state.StateKeys;
import io.lethe.flink.state.StateMigration;
import io.lethe.flink.state.StateRegistry;
import io.lethe.flink.state.TtlSerializerForms;
import io.lethe.flink.timers.EngineTimerQueues;
import io.lethe.flink.timers.LetheTimerQueue;
import io.lethe.flink.timers.TimerStore;
import io.lethe.flink.timers.QueueRecord;

import org.apache.flink.api.common.ExecutionConfig;
import org.apache.flink.api.common.state.State;
import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSchemaCompatibility;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.query.TaskKvStateRegistry;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.CheckpointStreamFactory;
import org.apache.flink.runtime.state.CompositeKeySerializationUtils;
import org.apache.flink.runtime.state.HeapPriorityQueuesManager;
import org.apache.flink.runtime.state.InternalKeyContext;
import org.apache.flink.runtime.state.KeyGroupedInternalPriorityQueue;
import org.apache.flink.runtime.state.Keyed;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.PriorityComparable;
import org.apache.flink.runtime.state.RegisteredKeyValueStateBackendMetaInfo;
import org.apache.flink.runtime.state.SavepointResources;
import org.apache.flink.runtime.state.SerializedCompositeKeyBuilder;
import org.apache.flink.runtime.state.SnapshotExecutionType;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.SnapshotStrategyRunner;
import org.apache.flink.runtime.state.StateSnapshotTransformer.StateSnapshotTransformFactory;
import org.apache.flink.runtime.state.StreamCompressionDecorator;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueElement;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueSnapshotRestoreWrapper;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueStateSnapshot;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot;
import org.apache.flink.runtime.state.metrics.LatencyTrackingStateConfig;
import org.apache.flink.runtime.state.metrics.SizeTrackingStateConfig;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;
import org.apache.flink.util.FileUtils;
import org.apache.flink.util.CloseableIterator;
import org.apache.flink.util.FlinkRuntimeException;
import org.apache.flink.util.StateMigrationException;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nonnull;

import java.io.File;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RunnableFuture;
import java.util.stream.Stream;

/**
 * The keyed state backend of one operator subtask: one Lethe engine, one column family per
 * state, keys in Flink's composite layout. Timers live on the heap (Flink's heap priority
 * queues) and are part of every snapshot. Checkpoints and native savepoints are the engine's own
 * files (incremental when enabled, {@link LetheNativeSnapshotStrategy}); canonical savepoints are
 * written in Flink's key-group format from an engine snapshot.
 *
 * <p>Not thread-safe except where Flink requires it (the asynchronous snapshot part reads a
 * local engine checkpoint or an engine snapshot while the task thread goes on).
 */
public class LetheKeyedStateBackend<K> extends AbstractKeyedStateBackend<K> implements LetheStateContext<K> {
    private static final Logger LOG = LoggerFactory.getLogger(LetheKeyedStateBackend.class);

    /**
     * The engine of one backend and what works on it, as the builder assembles them; sharedMemory (may
     * be null) is a lease the backend gives back when disposed, and transfer's threads it stops then;
     * engineTimers is null when timers are kept on the heap (in {@code queues}).
     */
    record Engine<K>(LetheDb db, File instanceBasePath, StateRegistry states, HeapPriorityQueuesManager queues,
            EngineTimerQueues engineTimers, LetheNativeSnapshotStrategy<K> snapshots, ExpiryDriver expiryDriver,
            WindowExpiry window, AutoCloseable sharedMemory, FileTransfer transfer) {}

    private final LetheDb db;
    private final File instanceBasePath;
    private final StateRegistry kvStates;
    private final Map<String, AbstractLetheState<K, ?, ?>> createdKVStates = new HashMap<>();
    private final HeapPriorityQueuesManager queues;
    private final EngineTimerQueues engineTimers;  // null: timers on the heap
    private final Set<String> timerGauges = new HashSet<>();
    private final int keyGroupPrefixBytes;
    private final SerializedCompositeKeyBuilder<K> sharedKeyBuilder;
    private final StateKeys<K> keys;
    private final LetheNativeSnapshotStrategy<K> nativeSnapshots;
    private final ExpiryDriver expiryDriver;
    private final AutoCloseable sharedMemory;  // may be null
    private final FileTransfer transfer;
    private final WindowExpiry window;
    private final MetricGroup expiryMetrics;
    private final LetheMetrics metrics;
    /** Read by metric reporters from their own threads. */
    private final Map<String, StateExpiry> expiries = new ConcurrentHashMap<>();
    private boolean disposed;

    LetheKeyedStateBackend(TaskKvStateRegistry kvStateRegistry, TypeSerializer<K> keySerializer,
            ClassLoader userCodeClassLoader, ExecutionConfig executionConfig, TtlTimeProvider ttlTimeProvider,
            LatencyTrackingStateConfig latencyTrackingStateConfig, SizeTrackingStateConfig sizeTrackingStateConfig,
            CloseableRegistry cancelStreamRegistry, StreamCompressionDecorator compression,
            InternalKeyContext<K> keyContext, Engine<K> engine, MetricGroup metricGroup) {
        super(kvStateRegistry, keySerializer, userCodeClassLoader, executionConfig, ttlTimeProvider,
                latencyTrackingStateConfig, sizeTrackingStateConfig, cancelStreamRegistry, compression, keyContext);
        this.db = engine.db();
        this.window = engine.window();
        this.sharedMemory = engine.sharedMemory();
        this.transfer = engine.transfer();
        this.instanceBasePath = engine.instanceBasePath();
        this.kvStates = engine.states();
        this.queues = engine.queues();
        this.engineTimers = engine.engineTimers();
        this.nativeSnapshots = engine.snapshots();
        this.expiryDriver = engine.expiryDriver();
        this.keyGroupPrefixBytes =
                CompositeKeySerializationUtils.computeRequiredBytesInKeyGroupPrefix(keyContext.getNumberOfKeyGroups());
        this.sharedKeyBuilder = new SerializedCompositeKeyBuilder<>(keySerializer, keyGroupPrefixBytes, 32);
        this.keys = new StateKeys<>(this);
        window.setCurrentKey(this::getCurrentKey);
        for (RegisteredState state : kvStates.all()) {
            window.registered(state.name());
            try {
                state.expiry().restoreHorizon(db.horizon(state.columnFamily()));
            } catch (LetheException e) {
                throw new FlinkRuntimeException("Could not read the restored horizon of " + state.name(), e);
            }
        }
        if (metricGroup != null) {
            this.metrics = LetheMetrics.register(db, metricGroup);
            metrics.group().gauge("horizon-advances", (Gauge<Long>) expiryDriver::advances);
            this.expiryMetrics = metrics.group().addGroup("expiry");
        } else {
            this.metrics = null;
            this.expiryMetrics = null;
        }
    }

    // ---- What the states use.

    @Override
    public LetheDb db() {
        return db;
    }

    @Override
    public int keyGroupPrefixBytes() {
        return keyGroupPrefixBytes;
    }

    @Override
    public SerializedCompositeKeyBuilder<K> sharedKeyBuilder() {
        return sharedKeyBuilder;
    }

    @Override
    public void setCurrentKey(K newKey) {
        super.setCurrentKey(newKey);
        sharedKeyBuilder.setKeyAndKeyGroup(getCurrentKey(), getCurrentKeyGroupIndex());
    }

    @Override
    public void setCurrentKeyAndKeyGroup(K newKey, int newKeyGroupIndex) {
        super.setCurrentKeyAndKeyGroup(newKey, newKeyGroupIndex);
        sharedKeyBuilder.setKeyAndKeyGroup(getCurrentKey(), getCurrentKeyGroupIndex());
    }

    @Override
    public String getBackendTypeIdentifier() {
        return "lethe";
    }

    @Override
    public boolean isSafeToReuseKVState() {
        // States and timers in the engine keep serialized bytes and hand out new objects, so a caller
        // may reuse its key and value objects; heap timers hold references to keys, as in the RocksDB
        // backend with heap timers.
        return engineTimers != null;
    }

    // ---- State creation.

    @Nonnull
    @Override
    public <N, SV, SEV, S extends State, IS extends S> IS createOrUpdateInternalState(
            @Nonnull TypeSerializer<N> namespaceSerializer, @Nonnull StateDescriptor<S, SV> stateDesc,
            @Nonnull StateSnapshotTransformFactory<SEV> snapshotTransformFactory) throws Exception {
        return createOrUpdateInternalState(namespaceSerializer, stateDesc, snapshotTransformFactory, false);
    }

    @Nonnull
    @Override
    @SuppressWarnings("unchecked")
    public <N, SV, SEV, S extends State, IS extends S> IS createOrUpdateInternalState(
            @Nonnull TypeSerializer<N> namespaceSerializer, @Nonnull StateDescriptor<S, SV> stateDesc,
            @Nonnull StateSnapshotTransformFactory<SEV> snapshotTransformFactory, boolean allowFutureMetadataUpdates)
            throws Exception {
        RegisteredState registered = register(stateDesc, namespaceSerializer, allowFutureMetadataUpdates);
        configureExpiry(stateDesc, registered);
        AbstractLetheState<K, N, SV> state = (AbstractLetheState<K, N, SV>) createdKVStates.get(stateDesc.getName());
        if (state != null) {
            StateFactory.reconfigure(state, stateDesc, registered);
        } else {
            state = StateFactory.create(stateDesc, registered, this);
            createdKVStates.put(stateDesc.getName(), state);
        }
        return (IS) state;
    }

    /**
     * Turns the horizon of a state on or off from its descriptor (TTL with cleanup in background)
     * and reports the outcome: a log line when it is first decided or changes, and the gauge
     * {@code lethe.expiry.<state>} ("active: ..." or "off: why").
     */
    private void configureExpiry(StateDescriptor<?, ?> desc, RegisteredState registered) {
        String name = desc.getName();
        StateExpiry expiry = registered.expiry();
        window.registered(name);
        String before = expiry.status();
        if (expiry.applyTtlConfig(desc.getTtlConfig(), expiryDriver.periodMs())) {
            expiryDriver.register(registered.columnFamily(), expiry);
        } else {
            expiryDriver.unregister(name);
        }
        StateExpiry previous = expiries.put(name, expiry);
        if (previous == null || !expiry.status().equals(before)) {
            LOG.info("Lethe expiry of state '{}': {}", name, expiry.status());
        }
        if (previous == null && expiryMetrics != null) {
            expiryMetrics.gauge(name, (Gauge<String>) () -> expiries.get(name).status());
        }
    }

    /** The expiry of a state registered by the operator (null if none): status, floor. */
    public StateExpiry expiryOf(String stateName) {
        return expiries.get(stateName);
    }

    /** Test hook and metric source: the driver advancing this backend's horizons. */
    public ExpiryDriver expiryDriver() {
        return expiryDriver;
    }

    /**
     * Registers a state for its descriptor, or checks a registered one's new serializers (as
     * Flink's backends do) and migrates its values when the new serializer asks for it. A TTL
     * serializer of synchronous state and one of asynchronous state write the same bytes and are
     * taken as each other ({@link TtlSerializerForms}), so the job restores with either kind.
     */
    @SuppressWarnings("unchecked")
    private <N, S extends State, SV> RegisteredState register(StateDescriptor<S, SV> desc,
            TypeSerializer<N> namespaceSerializer, boolean allowFutureMetadataUpdates) throws Exception {
        RegisteredState registered = kvStates.get(desc.getName());
        TypeSerializer<SV> stateSerializer = desc.getSerializer();
        if (registered == null) {
            RegisteredKeyValueStateBackendMetaInfo<N, SV> meta = new RegisteredKeyValueStateBackendMetaInfo<>(
                    desc.getType(), desc.getName(), namespaceSerializer, stateSerializer,
                    StateSnapshotTransformFactory.noTransform());
            if (allowFutureMetadataUpdates) {
                meta = meta.withSerializerUpgradesAllowed();
            }
            return kvStates.register(db, meta);
        }
        RegisteredKeyValueStateBackendMetaInfo<N, SV> meta =
                (RegisteredKeyValueStateBackendMetaInfo<N, SV>) registered.metaInfo();
        TypeSerializer<N> previousNamespaceSerializer = meta.getNamespaceSerializer();
        TypeSerializerSchemaCompatibility<N> nsCompat = meta.updateNamespaceSerializer(namespaceSerializer);
        if (nsCompat.isCompatibleAfterMigration() || nsCompat.isIncompatible()) {
            throw new StateMigrationException("The new namespace serializer (" + namespaceSerializer
                    + ") must be compatible with the old namespace serializer (" + previousNamespaceSerializer + ").");
        }
        meta.checkStateMetaInfo(desc);
        TypeSerializer<SV> previousStateSerializer = meta.getStateSerializer();
        stateSerializer = TtlSerializerForms.inRestoredForm(stateSerializer, meta.getPreviousStateSerializerSnapshot());
        TypeSerializerSchemaCompatibility<SV> compat = meta.updateStateSerializer(stateSerializer);
        if (compat.isCompatibleAfterMigration()) {
            StateMigration.migrate(desc, registered, this, window, ttlTimeProvider);
        } else if (compat.isIncompatible()) {
            throw new StateMigrationException("The new state serializer (" + stateSerializer
                    + ") must not be incompatible with the old state serializer (" + previousStateSerializer + ").");
        }
        if (allowFutureMetadataUpdates) {
            registered.allowSerializerUpgrades();
        }
        return registered;
    }

    // ---- Timers.

    @Nonnull
    @Override
    public <T extends HeapPriorityQueueElement & PriorityComparable<? super T> & Keyed<?>>
            KeyGroupedInternalPriorityQueue<T> create(@Nonnull String stateName,
                    @Nonnull TypeSerializer<T> byteOrderedElementSerializer) {
        return create(stateName, byteOrderedElementSerializer, false);
    }

    @Override
    public <T extends HeapPriorityQueueElement & PriorityComparable<? super T> & Keyed<?>>
            KeyGroupedInternalPriorityQueue<T> create(@Nonnull String stateName,
                    @Nonnull TypeSerializer<T> byteOrderedElementSerializer, boolean allowFutureMetadataUpdates) {
        KeyGroupedInternalPriorityQueue<T> queue = engineTimers == null
                ? queues.createOrUpdate(stateName, byteOrderedElementSerializer, allowFutureMetadataUpdates)
                : engineQueue(stateName, byteOrderedElementSerializer, allowFutureMetadataUpdates);
        // The window operator's event-time timers tell how far its windows are cleaned up.
        if (window.isActive() && WindowExpiry.EVENT_TIMER_QUEUE.equals(stateName)) {
            return new PolledTimerQueue<>(queue, window, WindowExpiry.Domain.EVENT);
        }
        if (window.isActive() && WindowExpiry.PROCESSING_TIMER_QUEUE.equals(stateName)) {
            return new PolledTimerQueue<>(queue, window, WindowExpiry.Domain.PROCESSING);
        }
        return queue;
    }

    /**
     * A timer queue kept in the engine. Timers a restore put on the heap (a checkpoint taken with
     * heap timers) move into it.
     */
    @SuppressWarnings("unchecked")
    private <T extends HeapPriorityQueueElement & PriorityComparable<? super T> & Keyed<?>>
            KeyGroupedInternalPriorityQueue<T> engineQueue(String stateName, TypeSerializer<T> serializer,
                    boolean allowFutureMetadataUpdates) {
        LetheTimerQueue<T> queue = engineTimers.create(stateName, serializer, allowFutureMetadataUpdates);
        registerTimerGauges(stateName, queue.store());
        // Fired timers leave also between snapshots and while the input is idle.
        expiryDriver.register(stateName, queue.store().columnFamily(), queue.store()::publishedHorizon);
        HeapPriorityQueueSnapshotRestoreWrapper<?> restored = queues.getRegisteredPQStates().remove(stateName);
        if (restored != null) {
            try (CloseableIterator<T> it = (CloseableIterator<T>) restored.getPriorityQueue().iterator()) {
                while (it.hasNext()) {
                    queue.add(it.next());
                }
            } catch (Exception e) {
                throw new FlinkRuntimeException("Failed to move restored timers of " + stateName + " into Lethe", e);
            }
        }
        return queue;
    }

    /** Gauges of an engine timer queue under {@code lethe.timers.<queue>}, once per queue. */
    private void registerTimerGauges(String stateName, TimerStore store) {
        if (metrics == null || !timerGauges.add(stateName)) {
            return;
        }
        MetricGroup g = metrics.group().addGroup("timers").addGroup(stateName.replace("_timer_state/", ""));
        g.gauge("polls", (Gauge<Long>) store::polls);
        g.gauge("writes", (Gauge<Long>) store::writes);
        g.gauge("tombstones", (Gauge<Long>) store::tombstones);
        g.gauge("reads", (Gauge<Long>) store::reads);
        g.gauge("rows-read", (Gauge<Long>) store::rowsRead);
        g.gauge("horizon", (Gauge<Long>) store::publishedHorizon);
        if (store.pendingTimers() >= 0) {
            g.gauge("pending", (Gauge<Long>) store::pendingTimers);
        }
    }

    // ---- Keys.

    @Override
    public <N> Stream<K> getKeys(String state, N namespace) {
        RegisteredState registered = kvStates.get(state);
        return registered == null ? Stream.empty() : keys.inNamespace(registered, namespace);
    }

    @Override
    public <N> Stream<K> getKeys(List<String> states, N namespace) {
        Set<K> seen = new HashSet<>();
        Stream<K> all = Stream.empty();
        for (String state : states) {
            all = Stream.concat(all, getKeys(state, namespace));
        }
        return all.filter(seen::add);
    }

    @Override
    public <N> Stream<Tuple2<K, N>> getKeysAndNamespaces(String state) {
        RegisteredState registered = kvStates.get(state);
        return registered == null ? Stream.empty() : keys.withNamespaces(registered);
    }

    @Override
    public int numKeyValueStateEntries() {
        int count = 0;
        try {
            for (RegisteredState registered : kvStates.all()) {
                count += keys.countEntries(registered);
            }
        } catch (IOException e) {
            throw new FlinkRuntimeException("Failed to count Lethe state entries", e);
        }
        return count;
    }

    // ---- Snapshots.

    private LetheFullSnapshotResources<K> fullSnapshotResources() {
        List<ColumnFamilyHandle> cfs = new ArrayList<>();
        List<StateMetaInfoSnapshot> metas = new ArrayList<>();
        for (RegisteredState registered : kvStates.all()) {
            cfs.add(registered.columnFamily());
            metas.add(registered.snapshotMetaInfo());
        }
        Map<String, QueueRecord> timerRecords = Map.of();
        if (engineTimers != null) {
            try {
                engineTimers.prepareSnapshot();
            } catch (LetheException e) {
                throw new FlinkRuntimeException("Failed to prepare Lethe's timers for a savepoint", e);
            }
            metas.addAll(engineTimers.metaInfoSnapshots());
            timerRecords = engineTimers.records();
        }
        List<HeapPriorityQueueStateSnapshot<?>> queueSnapshots = new ArrayList<>();
        for (HeapPriorityQueueSnapshotRestoreWrapper<?> q : queues.getRegisteredPQStates().values()) {
            metas.add(q.getMetaInfo().snapshot());
            queueSnapshots.add(q.stateSnapshot());
        }
        return new LetheFullSnapshotResources<>(db, cfs, timerRecords, queueSnapshots, metas, keyGroupRange,
                keySerializer, keyGroupCompressionDecorator, keyGroupPrefixBytes);
    }

    /**
     * Checkpoints and native savepoints are native engine snapshots (incremental when enabled);
     * canonical savepoints go through {@link #savepoint()}. The expiring states' horizons move up to
     * now first, so that the engine's copy leaves out what has expired since the driver's last
     * advance: its flush drops those entries, and files holding nothing else are left out.
     */
    @Nonnull
    @Override
    public RunnableFuture<SnapshotResult<KeyedStateHandle>> snapshot(long checkpointId, long timestamp,
            @Nonnull CheckpointStreamFactory streamFactory, @Nonnull CheckpointOptions checkpointOptions)
            throws Exception {
        expiryDriver.advance();
        String description = nativeSnapshots.isIncremental() ? "Lethe incremental snapshot" : "Lethe native snapshot";
        return new SnapshotStrategyRunner<>(description, nativeSnapshots, cancelStreamRegistry,
                SnapshotExecutionType.ASYNCHRONOUS).snapshot(checkpointId, timestamp, streamFactory, checkpointOptions);
    }

    @Nonnull
    @Override
    public SavepointResources<K> savepoint() {
        return new SavepointResources<>(fullSnapshotResources(), SnapshotExecutionType.ASYNCHRONOUS);
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) {
        nativeSnapshots.notifyCheckpointComplete(checkpointId);
    }

    @Override
    public void notifyCheckpointAborted(long checkpointId) {
        nativeSnapshots.notifyCheckpointAborted(checkpointId);
    }

    // ---- Lifecycle.

    @Override
    public void dispose() {
        if (disposed) {
            return;
        }
        super.dispose();
        expiryDriver.close();  // before the engine closes: no horizon moves after this
        if (metrics != null) {
            metrics.refreshBeforeClose();
        }
        createdKVStates.clear();
        kvStates.clear();
        if (engineTimers != null) {
            engineTimers.clear();
        }
        db.close();  // waits for an asynchronous snapshot's reads in flight
        transfer.close();
        if (sharedMemory != null) {
            try {
                sharedMemory.close();  // the slot's budget goes with the last engine on it
            } catch (Exception e) {
                LOG.warn("Could not give back the Lethe memory budget lease", e);
            }
        }
        try {
            FileUtils.deleteDirectory(instanceBasePath);
        } catch (IOException e) {
            LOG.warn("Could not delete the Lethe working directory {}", instanceBasePath, e);
        }
        disposed = true;
    }
}
