package io.lethe.flink;

import io.lethe.engine.ColumnFamilyHandle;
import io.lethe.engine.ColumnFamilyOptions;
import io.lethe.engine.LetheDb;
import io.lethe.engine.LetheException;
import io.lethe.engine.LetheIterator;
import io.lethe.engine.ReadOptions;
import io.lethe.engine.Snapshot;
import io.lethe.engine.WriteBatch;
import io.lethe.engine.WriteOptions;
import io.lethe.flink.expiry.ExpiryDriver;
import io.lethe.flink.expiry.PolledTimerQueue;
import io.lethe.flink.expiry.StateExpiry;
import io.lethe.flink.expiry.WindowExpiry;
import io.lethe.flink.snapshot.CheckpointFile;
import io.lethe.flink.snapshot.LetheFullSnapshotResources;
import io.lethe.flink.snapshot.LetheNativeSnapshotStrategy;
import io.lethe.flink.state.AbstractLetheState;
import io.lethe.flink.state.LetheAggregatingState;
import io.lethe.flink.state.LetheListState;
import io.lethe.flink.state.LetheMapState;
import io.lethe.flink.state.LetheReducingState;
import io.lethe.flink.state.LetheValueState;

import org.apache.flink.api.common.ExecutionConfig;
import org.apache.flink.api.common.state.AggregatingStateDescriptor;
import org.apache.flink.api.common.state.ReducingStateDescriptor;
import org.apache.flink.api.common.state.State;
import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSchemaCompatibility;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.base.MapSerializer;
import org.apache.flink.api.common.typeutils.base.MapSerializerSnapshot;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.query.TaskKvStateRegistry;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.CheckpointStreamFactory;
import org.apache.flink.runtime.state.CompositeKeySerializationUtils;
import org.apache.flink.runtime.state.HeapPriorityQueuesManager;
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
import org.apache.flink.runtime.state.heap.HeapPriorityQueueSetFactory;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueSnapshotRestoreWrapper;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueStateSnapshot;
import org.apache.flink.runtime.state.InternalKeyContext;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot;
import org.apache.flink.runtime.state.metrics.LatencyTrackingStateConfig;
import org.apache.flink.runtime.state.metrics.SizeTrackingStateConfig;
import org.apache.flink.runtime.state.ttl.TtlAwareSerializer;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;
import org.apache.flink.util.FileUtils;
import org.apache.flink.util.FlinkRuntimeException;
import org.apache.flink.util.StateMigrationException;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nonnull;

import java.io.File;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Set;
import java.util.Spliterator;
import java.util.SortedMap;
import java.util.Spliterators;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RunnableFuture;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;

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
public class LetheKeyedStateBackend<K> extends AbstractKeyedStateBackend<K> {
    private static final Logger LOG = LoggerFactory.getLogger(LetheKeyedStateBackend.class);

    /** A registered key-value state: its column family, Flink meta info and delete keys. */
    public static final class StateInfo {
        ColumnFamilyHandle columnFamily;
        RegisteredKeyValueStateBackendMetaInfo<?, ?> metaInfo;
        StateExpiry expiry;

        /** @param window the operator's window expiry, deciding the delete keys of window contents */
        public StateInfo(ColumnFamilyHandle columnFamily, RegisteredKeyValueStateBackendMetaInfo<?, ?> metaInfo,
                WindowExpiry window) {
            this.columnFamily = columnFamily;
            this.metaInfo = metaInfo;
            this.expiry = StateExpiry.forState(metaInfo.getName(), metaInfo.getStateType(),
                    metaInfo.getStateSerializer(), metaInfo.getNamespaceSerializer(), window, 0);
        }

        public StateExpiry expiry() {
            return expiry;
        }

        public ColumnFamilyHandle columnFamily() {
            return columnFamily;
        }

        public RegisteredKeyValueStateBackendMetaInfo<?, ?> metaInfo() {
            return metaInfo;
        }
    }

    private final LetheDb db;
    private final File instanceBasePath;
    private final ColumnFamilyOptions columnFamilyOptions;
    private final LinkedHashMap<String, StateInfo> kvStateInformation;
    private final Map<String, AbstractLetheState<K, ?, ?>> createdKVStates = new HashMap<>();
    private final HeapPriorityQueuesManager queues;
    private final int keyGroupPrefixBytes;
    private final SerializedCompositeKeyBuilder<K> sharedKeyBuilder;
    private final LetheNativeSnapshotStrategy<K> nativeSnapshots;
    private final ExpiryDriver expiryDriver;
    private final WindowExpiry window;
    private final MetricGroup expiryMetrics;
    private final LetheMetrics metrics;
    /** Read by metric reporters from their own threads. */
    private final Map<String, StateExpiry> expiries = new ConcurrentHashMap<>();
    private boolean disposed;

    public LetheKeyedStateBackend(TaskKvStateRegistry kvStateRegistry, TypeSerializer<K> keySerializer,
            ClassLoader userCodeClassLoader, ExecutionConfig executionConfig, TtlTimeProvider ttlTimeProvider,
            LatencyTrackingStateConfig latencyTrackingStateConfig, SizeTrackingStateConfig sizeTrackingStateConfig,
            CloseableRegistry cancelStreamRegistry, StreamCompressionDecorator compression,
            InternalKeyContext<K> keyContext, LetheDb db, File instanceBasePath, ColumnFamilyOptions columnFamilyOptions,
            LinkedHashMap<String, StateInfo> kvStateInformation,
            Map<String, HeapPriorityQueueSnapshotRestoreWrapper<?>> registeredQueues,
            HeapPriorityQueueSetFactory queueFactory, MetricGroup metricGroup, boolean incrementalCheckpoints,
            UUID backendUid, SortedMap<Long, List<CheckpointFile>> restoredTables, long restoredCheckpointId,
            WindowExpiry window) {
        super(kvStateRegistry, keySerializer, userCodeClassLoader, executionConfig, ttlTimeProvider,
                latencyTrackingStateConfig, sizeTrackingStateConfig, cancelStreamRegistry, compression, keyContext);
        this.db = db;
        this.window = window;
        this.instanceBasePath = instanceBasePath;
        this.columnFamilyOptions = columnFamilyOptions;
        this.kvStateInformation = kvStateInformation;
        this.keyGroupPrefixBytes =
                CompositeKeySerializationUtils.computeRequiredBytesInKeyGroupPrefix(keyContext.getNumberOfKeyGroups());
        this.sharedKeyBuilder = new SerializedCompositeKeyBuilder<>(keySerializer, keyGroupPrefixBytes, 32);
        this.queues = new HeapPriorityQueuesManager(registeredQueues, queueFactory, keyContext.getKeyGroupRange(),
                keyContext.getNumberOfKeyGroups());
        this.nativeSnapshots = new LetheNativeSnapshotStrategy<>(db, instanceBasePath, keySerializer,
                kvStateInformation, registeredQueues::values, keyContext.getKeyGroupRange(), backendUid,
                incrementalCheckpoints, restoredTables, restoredCheckpointId, window::record);
        this.expiryDriver = new ExpiryDriver(db, ttlTimeProvider, columnFamilyOptions.deletePersistenceThreshold());
        window.setCurrentKey(this::getCurrentKey);
        for (StateInfo info : kvStateInformation.values()) {
            window.registered(info.metaInfo.getName());
            try {
                info.expiry.setRestoredHorizon(db.horizon(info.columnFamily));
            } catch (LetheException e) {
                throw new FlinkRuntimeException("Could not read the restored horizon of " + info.metaInfo.getName(), e);
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

    // ---- Accessors for the states.

    public LetheDb db() {
        return db;
    }

    public int keyGroupPrefixBytes() {
        return keyGroupPrefixBytes;
    }

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
        // Heap timers hold references to keys, as in the RocksDB backend with heap timers.
        return false;
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
        StateInfo info = register(stateDesc, namespaceSerializer, allowFutureMetadataUpdates);
        configureExpiry(stateDesc, info);
        RegisteredKeyValueStateBackendMetaInfo<N, SV> meta = (RegisteredKeyValueStateBackendMetaInfo<N, SV>) info.metaInfo;
        AbstractLetheState<K, N, SV> existing = (AbstractLetheState<K, N, SV>) createdKVStates.get(stateDesc.getName());
        if (existing != null) {
            existing.update(info.columnFamily, meta.getNamespaceSerializer(), meta.getStateSerializer(),
                    stateDesc.getDefaultValue());
            existing.setExpiry(info.expiry);
            if (existing instanceof LetheReducingState) {
                ((LetheReducingState<K, N, SV>) existing).setReduceFunction(
                        ((ReducingStateDescriptor<SV>) stateDesc).getReduceFunction());
            } else if (existing instanceof LetheAggregatingState) {
                ((LetheAggregatingState<K, N, Object, SV, Object>) existing).setAggregateFunction(
                        ((AggregatingStateDescriptor<Object, SV, Object>) stateDesc).getAggregateFunction());
            }
            return (IS) existing;
        }
        AbstractLetheState<K, N, SV> state = createState(stateDesc, info.columnFamily, meta);
        state.setExpiry(info.expiry);
        createdKVStates.put(stateDesc.getName(), state);
        return (IS) state;
    }

    /**
     * Turns the horizon of a state on or off from its descriptor (TTL with cleanup in background)
     * and reports the outcome: a log line when it is first decided or changes, and the gauge
     * {@code lethe.expiry.<state>} ("active: ..." or "off: why").
     */
    private void configureExpiry(StateDescriptor<?, ?> desc, StateInfo info) {
        String name = desc.getName();
        window.registered(name);
        String before = info.expiry.status();
        if (info.expiry.configure(desc.getTtlConfig(), expiryDriver.periodMs())) {
            expiryDriver.register(info.columnFamily, info.expiry);
        } else {
            expiryDriver.unregister(name);
        }
        StateExpiry previous = expiries.put(name, info.expiry);
        if (previous == null || !info.expiry.status().equals(before)) {
            LOG.info("Lethe expiry of state '{}': {}", name, info.expiry.status());
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

    @SuppressWarnings({"unchecked", "rawtypes"})
    private <N, SV, S extends State> AbstractLetheState<K, N, SV> createState(StateDescriptor<S, SV> desc,
            ColumnFamilyHandle cf, RegisteredKeyValueStateBackendMetaInfo<N, SV> meta) {
        TypeSerializer<N> ns = meta.getNamespaceSerializer();
        TypeSerializer<SV> vs = meta.getStateSerializer();
        SV dv = desc.getDefaultValue();
        switch (desc.getType()) {
            case VALUE:
                return new LetheValueState<>(cf, ns, vs, dv, this);
            case LIST:
                return (AbstractLetheState) new LetheListState<>(cf, ns, (TypeSerializer) vs, (List) dv, this);
            case MAP:
                return (AbstractLetheState) new LetheMapState<>(cf, ns, (TypeSerializer) vs, (Map) dv, this);
            case REDUCING:
                return new LetheReducingState<>(cf, ns, vs, dv, ((ReducingStateDescriptor<SV>) desc).getReduceFunction(), this);
            case AGGREGATING:
                return new LetheAggregatingState<>(cf, ns, vs, dv,
                        ((AggregatingStateDescriptor<Object, SV, Object>) desc).getAggregateFunction(), this);
            default:
                throw new FlinkRuntimeException("State " + desc.getName() + " of type " + desc.getType()
                        + " is not supported by the Lethe state backend");
        }
    }

    @SuppressWarnings("unchecked")
    private <N, S extends State, SV> StateInfo register(StateDescriptor<S, SV> desc, TypeSerializer<N> namespaceSerializer,
            boolean allowFutureMetadataUpdates) throws Exception {
        StateInfo old = kvStateInformation.get(desc.getName());
        TypeSerializer<SV> stateSerializer = desc.getSerializer();
        if (old == null) {
            RegisteredKeyValueStateBackendMetaInfo<N, SV> meta = new RegisteredKeyValueStateBackendMetaInfo<>(
                    desc.getType(), desc.getName(), namespaceSerializer, stateSerializer,
                    StateSnapshotTransformFactory.noTransform());
            if (allowFutureMetadataUpdates) {
                meta = meta.withSerializerUpgradesAllowed();
            }
            StateInfo info = new StateInfo(columnFamily(desc.getName()), meta, window);
            kvStateInformation.put(desc.getName(), info);
            return info;
        }
        RegisteredKeyValueStateBackendMetaInfo<N, SV> meta = (RegisteredKeyValueStateBackendMetaInfo<N, SV>) old.metaInfo;
        TypeSerializer<N> previousNamespaceSerializer = meta.getNamespaceSerializer();
        TypeSerializerSchemaCompatibility<N> nsCompat = meta.updateNamespaceSerializer(namespaceSerializer);
        if (nsCompat.isCompatibleAfterMigration() || nsCompat.isIncompatible()) {
            throw new StateMigrationException("The new namespace serializer (" + namespaceSerializer
                    + ") must be compatible with the old namespace serializer (" + previousNamespaceSerializer + ").");
        }
        meta.checkStateMetaInfo(desc);
        TypeSerializer<SV> previousStateSerializer = meta.getStateSerializer();
        TypeSerializerSchemaCompatibility<SV> compat = meta.updateStateSerializer(stateSerializer);
        if (compat.isCompatibleAfterMigration()) {
            migrateStateValues(desc, old, meta);
        } else if (compat.isIncompatible()) {
            throw new StateMigrationException("The new state serializer (" + stateSerializer
                    + ") must not be incompatible with the old state serializer (" + previousStateSerializer + ").");
        }
        if (allowFutureMetadataUpdates) {
            meta = meta.withSerializerUpgradesAllowed();
            old.metaInfo = meta;
        }
        return old;
    }

    private ColumnFamilyHandle columnFamily(String stateName) throws IOException {
        ColumnFamilyHandle cf = db.columnFamily(stateName);
        return cf != null ? cf : db.createColumnFamily(stateName, columnFamilyOptions);
    }

    /** Rewrites every value of a state for its new serializer (Flink's state migration). */
    @SuppressWarnings("unchecked")
    private <N, S extends State, SV> void migrateStateValues(StateDescriptor<S, SV> desc, StateInfo info,
            RegisteredKeyValueStateBackendMetaInfo<N, SV> meta) throws Exception {
        if (desc.getType() == StateDescriptor.Type.MAP) {
            TypeSerializerSnapshot<SV> previous = meta.getPreviousStateSerializerSnapshot();
            TypeSerializer<SV> next = meta.getStateSerializer();
            if (!(previous instanceof MapSerializerSnapshot) || !(next instanceof MapSerializer)) {
                throw new StateMigrationException("Map state " + desc.getName() + " changed its serializer kind");
            }
            TypeSerializerSnapshot<Object> previousKey =
                    (TypeSerializerSnapshot<Object>) ((MapSerializerSnapshot<?, ?>) previous).getKeySerializerSnapshot();
            TypeSerializer<Object> nextKey = (TypeSerializer<Object>) ((MapSerializer<?, ?>) next).getKeySerializer();
            if (!nextKey.snapshotConfiguration().resolveSchemaCompatibility(previousKey).isCompatibleAsIs()) {
                throw new StateMigrationException("The new serializer for a MapState requires state migration in order"
                        + " for the job to proceed, since the key schema has changed. However, migration for MapState"
                        + " currently only allows value schema evolutions.");
            }
        }
        LOG.info("Migrating the values of state {} to its new serializer.", desc.getName());
        AbstractLetheState<K, N, SV> state = createState(desc, info.columnFamily, meta);
        // TTL may be turned on or off: the new values' delete keys follow the new serializer.
        StateExpiry expiry = StateExpiry.forState(desc.getName(), desc.getType(), meta.getStateSerializer(),
                meta.getNamespaceSerializer(), window, info.expiry.floor());
        // Turning TTL on lowers delete keys from the maximum: a point delete in between keeps the
        // engine's contract (a newer version never has a smaller delete key than an older one).
        boolean lowered = expiry.isTimestamped() && !info.expiry.isTimestamped();
        info.expiry = expiry;
        long now = ttlTimeProvider.currentTimestamp();
        TtlAwareSerializer<SV, ?> previous =
                (TtlAwareSerializer<SV, ?>) TtlAwareSerializer.wrapTtlAwareSerializer(meta.getPreviousStateSerializer());
        TtlAwareSerializer<SV, ?> current =
                (TtlAwareSerializer<SV, ?>) TtlAwareSerializer.wrapTtlAwareSerializer(meta.getStateSerializer());
        DataInputDeserializer in = new DataInputDeserializer();
        DataOutputSerializer out = new DataOutputSerializer(512);
        try (Snapshot snapshot = db.getSnapshot();
                LetheIterator it = db.newIterator(ReadOptions.atSnapshot(snapshot), info.columnFamily)) {
            WriteBatch batch = new WriteBatch();
            for (it.seekToFirst(); it.isValid(); it.next()) {
                in.setBuffer(it.value());
                state.migrateSerializedValue(in, out, previous, current, ttlTimeProvider);
                byte[] value = out.getCopyOfBuffer();
                if (lowered) {
                    batch.delete(info.columnFamily, it.key());
                }
                batch.put(info.columnFamily, it.key(), value, expiry.forRewrite(it.key(), value, now));
                out.clear();
                if (batch.sizeInBytes() > (4 << 20)) {
                    db.write(WriteOptions.NO_WAL, batch);
                    batch.clear();
                }
            }
            db.write(WriteOptions.NO_WAL, batch);
        }
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
        KeyGroupedInternalPriorityQueue<T> queue =
                queues.createOrUpdate(stateName, byteOrderedElementSerializer, allowFutureMetadataUpdates);
        // The window operator's event-time timers tell how far its windows are cleaned up.
        if (window.isActive() && WindowExpiry.EVENT_TIMER_QUEUE.equals(stateName)) {
            return new PolledTimerQueue<>(queue, window, WindowExpiry.Domain.EVENT);
        }
        if (window.isActive() && WindowExpiry.PROCESSING_TIMER_QUEUE.equals(stateName)) {
            return new PolledTimerQueue<>(queue, window, WindowExpiry.Domain.PROCESSING);
        }
        return queue;
    }

    // ---- Keys.

    @Override
    @SuppressWarnings("unchecked")
    public <N> Stream<K> getKeys(String state, N namespace) {
        StateInfo info = kvStateInformation.get(state);
        if (info == null) {
            return Stream.empty();
        }
        TypeSerializer<N> ns = (TypeSerializer<N>) info.metaInfo.getNamespaceSerializer();
        boolean ambiguous = CompositeKeySerializationUtils.isAmbiguousKeyPossible(getKeySerializer(), ns);
        byte[] namespaceBytes;
        try {
            DataOutputSerializer out = new DataOutputSerializer(8);
            CompositeKeySerializationUtils.writeNameSpace(namespace, ns, out, ambiguous);
            namespaceBytes = out.getCopyOfBuffer();
        } catch (IOException e) {
            throw new FlinkRuntimeException("Failed to serialize a namespace", e);
        }
        // An entry belongs to the namespace if the bytes right after its key start with it.
        return distinct(info.columnFamily, (key, in) -> {
            K k = CompositeKeySerializationUtils.readKey(getKeySerializer(), in, ambiguous);
            int offset = key.length - in.available();
            return key.length - offset >= namespaceBytes.length
                            && Arrays.equals(key, offset, offset + namespaceBytes.length, namespaceBytes, 0,
                                    namespaceBytes.length)
                    ? k
                    : null;
        });
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
    @SuppressWarnings("unchecked")
    public <N> Stream<Tuple2<K, N>> getKeysAndNamespaces(String state) {
        StateInfo info = kvStateInformation.get(state);
        if (info == null) {
            return Stream.empty();
        }
        TypeSerializer<N> ns = (TypeSerializer<N>) info.metaInfo.getNamespaceSerializer();
        boolean ambiguous = CompositeKeySerializationUtils.isAmbiguousKeyPossible(getKeySerializer(), ns);
        return distinct(info.columnFamily, (key, in) -> Tuple2.of(
                CompositeKeySerializationUtils.readKey(getKeySerializer(), in, ambiguous),
                CompositeKeySerializationUtils.readNamespace(ns, in, ambiguous)));
    }

    /** Decodes an entry's key (positioned after the key group); null skips the entry. */
    private interface EntryDecoder<T> {
        T decode(byte[] key, DataInputDeserializer in) throws IOException;
    }

    /** The distinct decoded values of a column family's entries, in key order, as a stream. */
    private <T> Stream<T> distinct(ColumnFamilyHandle cf, EntryDecoder<T> decoder) {
        DistinctIterator<T> it = new DistinctIterator<>(cf, decoder);
        return StreamSupport.stream(Spliterators.spliteratorUnknownSize(it, Spliterator.ORDERED), false)
                .onClose(it::close);
    }

    /** Entries of one key decode to the same value and are adjacent: emit each value once. */
    private final class DistinctIterator<T> implements Iterator<T>, AutoCloseable {
        private final LetheIterator it;
        private final EntryDecoder<T> decoder;
        private final DataInputDeserializer in = new DataInputDeserializer();
        private T next;
        private T previous;

        DistinctIterator(ColumnFamilyHandle cf, EntryDecoder<T> decoder) {
            this.decoder = decoder;
            try {
                this.it = db.newIterator(cf);
                it.seekToFirst();
            } catch (IOException e) {
                throw new FlinkRuntimeException("Failed to iterate the keys of a Lethe state", e);
            }
        }

        @Override
        public boolean hasNext() {
            try {
                while (next == null && it.isValid()) {
                    byte[] key = it.key();
                    in.setBuffer(key);
                    in.skipBytesToRead(keyGroupPrefixBytes);
                    T value = decoder.decode(key, in);
                    if (value != null && !value.equals(previous)) {
                        next = value;
                        previous = value;
                    }
                    it.next();
                }
                return next != null;
            } catch (IOException e) {
                throw new FlinkRuntimeException("Failed to iterate the keys of a Lethe state", e);
            }
        }

        @Override
        public T next() {
            if (!hasNext()) {
                throw new NoSuchElementException();
            }
            T r = next;
            next = null;
            return r;
        }

        @Override
        public void close() {
            it.close();
        }
    }

    @Override
    public int numKeyValueStateEntries() {
        int count = 0;
        try {
            for (StateInfo info : kvStateInformation.values()) {
                try (LetheIterator it = db.newIterator(info.columnFamily)) {
                    for (it.seekToFirst(); it.isValid(); it.next()) {
                        count++;
                    }
                }
            }
        } catch (IOException e) {
            throw new FlinkRuntimeException("Failed to count Lethe state entries", e);
        }
        return count;
    }

    // ---- Snapshots.

    private LetheFullSnapshotResources<K> fullSnapshotResources() {
        List<ColumnFamilyHandle> cfs = new ArrayList<>(kvStateInformation.size());
        List<StateMetaInfoSnapshot> metas = new ArrayList<>();
        for (StateInfo info : kvStateInformation.values()) {
            cfs.add(info.columnFamily);
            metas.add(info.metaInfo.snapshot());
        }
        List<HeapPriorityQueueStateSnapshot<?>> queueSnapshots = new ArrayList<>();
        for (HeapPriorityQueueSnapshotRestoreWrapper<?> q : queues.getRegisteredPQStates().values()) {
            metas.add(q.getMetaInfo().snapshot());
            queueSnapshots.add(q.stateSnapshot());
        }
        return new LetheFullSnapshotResources<>(db, cfs, queueSnapshots, metas, keyGroupRange, keySerializer,
                keyGroupCompressionDecorator, keyGroupPrefixBytes);
    }

    /**
     * Checkpoints and native savepoints are native engine snapshots (incremental when enabled);
     * canonical savepoints go through {@link #savepoint()}.
     */
    @Nonnull
    @Override
    public RunnableFuture<SnapshotResult<KeyedStateHandle>> snapshot(long checkpointId, long timestamp,
            @Nonnull CheckpointStreamFactory streamFactory, @Nonnull CheckpointOptions checkpointOptions)
            throws Exception {
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
        kvStateInformation.clear();
        db.close();  // waits for an asynchronous snapshot's reads in flight
        try {
            FileUtils.deleteDirectory(instanceBasePath);
        } catch (IOException e) {
            LOG.warn("Could not delete the Lethe working directory {}", instanceBasePath, e);
        }
        disposed = true;
    }
}
