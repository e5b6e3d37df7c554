package io.lethe.flink.async;

import io.lethe.flink.state.AbstractLetheState;

import org.apache.flink.api.common.ExecutionConfig;
import org.apache.flink.api.common.state.v2.AggregatingStateDescriptor;
import org.apache.flink.api.common.state.v2.ReducingStateDescriptor;
import org.apache.flink.api.common.state.v2.State;
import org.apache.flink.api.common.state.v2.StateDescriptor;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.runtime.asyncprocessing.StateExecutor;
import org.apache.flink.runtime.asyncprocessing.StateRequestHandler;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.checkpoint.SnapshotType;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.AsyncKeyedStateBackend;
import org.apache.flink.runtime.state.CheckpointStreamFactory;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupedInternalPriorityQueue;
import org.apache.flink.runtime.state.Keyed;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.PriorityComparable;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.StateSnapshotTransformer.StateSnapshotTransformFactory;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueElement;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;
import org.apache.flink.runtime.state.v2.AbstractListState;
import org.apache.flink.runtime.state.v2.AbstractMapState;
import org.apache.flink.runtime.state.v2.AbstractValueState;
import org.apache.flink.runtime.state.v2.internal.InternalKeyedState;
import org.apache.flink.runtime.state.v2.ttl.TtlStateFactory;
import org.apache.flink.runtime.state.v2.StateDescriptorUtils;

import javax.annotation.Nonnull;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.RunnableFuture;

/**
 * The keyed state backend of an operator with asynchronous state (Flink's State V2): Flink's
 * asynchronous state classes issue requests, and {@link LetheStateExecutor} serves them on the
 * synchronous Lethe backend of the same subtask, their engine work on a {@link RequestPipeline}. Storage, state registration, timers, snapshots
 * and restore are that backend's, so its checkpoints and native savepoints restore with
 * synchronous or asynchronous state alike. State TTL comes from Flink's asynchronous TTL wrappers.
 */
public final class LetheAsyncKeyedStateBackend<K> implements AsyncKeyedStateBackend<K> {
    private final AbstractKeyedStateBackend<K> backend;
    private final ExecutionConfig executionConfig;
    private final TtlTimeProvider ttlTimeProvider;
    private final RequestPipeline pipeline;
    private final RequestServer<K> server;
    private final Map<String, State> states = new HashMap<>();
    private final List<LetheStateExecutor> executors = new ArrayList<>();
    private boolean disposed;

    /**
     * @param inlineBatchSize batches up to this many requests are served by the task thread itself
     *     when no batch is in flight
     * @param name names the thread that serves the engine work of larger batches
     * @param metrics where the executor's gauges go ({@link ExecutorMetrics})
     */
    public LetheAsyncKeyedStateBackend(AbstractKeyedStateBackend<K> backend, ExecutionConfig executionConfig,
            TtlTimeProvider ttlTimeProvider, int inlineBatchSize, String name, MetricGroup metrics) {
        this.backend = backend;
        this.executionConfig = executionConfig;
        this.ttlTimeProvider = ttlTimeProvider;
        // Fully loaded with one batch being served and one waiting: more only adds latency.
        BatchCounts counts = new BatchCounts();
        this.pipeline = new RequestPipeline("Lethe state requests " + name, inlineBatchSize, 2, counts);
        this.server = new RequestServer<>(backend, pipeline, counts);
        ExecutorMetrics.register(metrics, counts, pipeline);
    }

    /** The synchronous backend that stores this one's state (tests, metrics). */
    public AbstractKeyedStateBackend<K> storage() {
        return backend;
    }

    /** Multi-gets and the point reads in them, write batches and the entries in them, so far (tests). */
    long[] batchCounts() {
        return server.batchCounts();
    }

    /** Returns once every batch of requests given to this backend so far has been served (tests). */
    void awaitServed() throws InterruptedException {
        pipeline.drain();
    }

    @Override
    public void setup(@Nonnull StateRequestHandler stateRequestHandler) {
        server.setHandler(stateRequestHandler);
    }

    @Override
    @SuppressWarnings("unchecked")
    public <N, S extends State, SV> S getOrCreateKeyedState(N defaultNamespace, TypeSerializer<N> namespaceSerializer,
            StateDescriptor<SV> stateDesc) throws Exception {
        State existing = states.get(stateDesc.getStateId());
        if (existing != null) {
            return (S) existing;
        }
        if (!stateDesc.isSerializerInitialized()) {
            stateDesc.initializeSerializerUnlessSet(executionConfig);
        }
        S state = TtlStateFactory.createStateAndWrapWithTtlIfEnabled(defaultNamespace, namespaceSerializer, stateDesc,
                this, ttlTimeProvider);
        states.put(stateDesc.getStateId(), state);
        return state;
    }

    @Nonnull
    @Override
    @SuppressWarnings({"unchecked", "rawtypes"})
    public <N, S extends InternalKeyedState, SV> S createStateInternal(@Nonnull N defaultNamespace,
            @Nonnull TypeSerializer<N> namespaceSerializer, @Nonnull StateDescriptor<SV> stateDesc) throws Exception {
        StateRequestHandler handler = server.handler();
        if (handler == null) {
            throw new IllegalStateException("The asynchronous Lethe backend creates state only after its setup");
        }
        // The state's storage: the synchronous state of the same name, which savepoints and snapshots know.
        // Its descriptor carries the TTL, so that expired values leave by the state's horizon.
        org.apache.flink.api.common.state.StateDescriptor<?, ?> storage =
                StateDescriptorUtils.transformFromV2ToV1(stateDesc);
        if (stateDesc.getTtlConfig().isEnabled()) {
            storage.enableTimeToLive(stateDesc.getTtlConfig());
        }
        Object store = backend.createOrUpdateInternalState(namespaceSerializer, storage,
                StateSnapshotTransformFactory.noTransform());
        TypeSerializer<SV> serializer = stateDesc.getSerializer();
        InternalKeyedState<K, N, ?> state = switch (stateDesc.getType()) {
            case VALUE -> new AbstractValueState<K, N, SV>(handler, serializer);
            case LIST -> new AbstractListState<K, N, SV>(handler, serializer);
            case MAP -> new AbstractMapState<K, N, Object, SV>(handler, serializer);
            case REDUCING -> new LetheAsyncReducingState<K, N, SV>(handler,
                    ((ReducingStateDescriptor<SV>) stateDesc).getReduceFunction(), serializer);
            case AGGREGATING -> new LetheAsyncAggregatingState<K, N, Object, SV, Object>(handler,
                    ((AggregatingStateDescriptor<Object, SV, Object>) stateDesc).getAggregateFunction(), serializer);
        };
        server.bind(state, (AbstractLetheState<?, ?, ?>) store, defaultNamespace);
        return (S) state;
    }

    @Nonnull
    @Override
    public StateExecutor createStateExecutor() {
        if (disposed) {
            throw new IllegalStateException("The asynchronous Lethe backend was disposed");
        }
        LetheStateExecutor executor = new LetheStateExecutor(server);
        executors.add(executor);
        return executor;
    }

    @Override
    public KeyGroupRange getKeyGroupRange() {
        return backend.getKeyGroupRange();
    }

    @Override
    public boolean requiresLegacySynchronousTimerSnapshots(SnapshotType checkpointType) {
        return backend.requiresLegacySynchronousTimerSnapshots(checkpointType);
    }

    @Override
    public boolean isSafeToReuseKVState() {
        return backend.isSafeToReuseKVState();
    }

    @Override
    public String getBackendTypeIdentifier() {
        return backend.getBackendTypeIdentifier();
    }

    @Nonnull
    @Override
    public <T extends HeapPriorityQueueElement & PriorityComparable<? super T> & Keyed<?>>
            KeyGroupedInternalPriorityQueue<T> create(@Nonnull String stateName,
                    @Nonnull TypeSerializer<T> byteOrderedElementSerializer) {
        return backend.create(stateName, byteOrderedElementSerializer);
    }

    @Override
    public <T extends HeapPriorityQueueElement & PriorityComparable<? super T> & Keyed<?>>
            KeyGroupedInternalPriorityQueue<T> create(@Nonnull String stateName,
                    @Nonnull TypeSerializer<T> byteOrderedElementSerializer, boolean allowFutureMetadataUpdates) {
        return backend.create(stateName, byteOrderedElementSerializer, allowFutureMetadataUpdates);
    }

    @Nonnull
    @Override
    public RunnableFuture<SnapshotResult<KeyedStateHandle>> snapshot(long checkpointId, long timestamp,
            @Nonnull CheckpointStreamFactory streamFactory, @Nonnull CheckpointOptions checkpointOptions)
            throws Exception {
        // Flink drains an operator's records before it snapshots; this makes sure no batch is left running.
        pipeline.drain();
        return backend.snapshot(checkpointId, timestamp, streamFactory, checkpointOptions);
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) throws Exception {
        backend.notifyCheckpointComplete(checkpointId);
    }

    @Override
    public void notifyCheckpointAborted(long checkpointId) throws Exception {
        backend.notifyCheckpointAborted(checkpointId);
    }

    @Override
    public void notifyCheckpointSubsumed(long checkpointId) throws Exception {
        backend.notifyCheckpointSubsumed(checkpointId);
    }

    @Override
    public void dispose() {
        if (disposed) {
            return;
        }
        disposed = true;
        for (LetheStateExecutor executor : executors) {
            executor.shutdown();
        }
        executors.clear();
        states.clear();
        pipeline.close(); // its thread uses the engine until then
        backend.dispose();
    }

    /** Stops the snapshot streams in flight; {@link #dispose()} releases the rest. */
    @Override
    public void close() throws IOException {
        backend.close();
    }
}
