package io.lethe.flink.async;

import io.lethe.engine.ColumnFamilyHandle;
import io.lethe.flink.state.AbstractLetheAppendingState;
import io.lethe.flink.state.AbstractLetheState;
import io.lethe.flink.state.LetheListState;
import io.lethe.flink.state.LetheMapState;
import io.lethe.flink.state.LetheValueState;
import io.lethe.flink.state.MapChunk;
import io.lethe.flink.state.StoredReader;

import org.apache.flink.api.common.state.v2.State;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.runtime.asyncprocessing.RecordContext;
import org.apache.flink.runtime.asyncprocessing.StateRequest;
import org.apache.flink.runtime.asyncprocessing.StateRequestHandler;
import org.apache.flink.runtime.asyncprocessing.StateRequestType;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.internal.InternalAppendingState;
import org.apache.flink.runtime.state.internal.InternalListState;
import org.apache.flink.runtime.state.internal.InternalMapState;
import org.apache.flink.runtime.state.internal.InternalValueState;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Serves the state requests of asynchronous states, a batch at a time or one by one, with the
 * synchronous Lethe states that store them: the same column families, keys and values, so both
 * kinds of operator read each other's snapshots. A request's record context gives the key; its
 * namespace (or the state's default) the namespace.
 *
 * <p>The task thread gathers a batch: it computes each point request's engine key and serializes
 * what its writes carry, with the states' own serializers. The {@link RequestPipeline}'s thread then
 * looks the reads up (one multi-get per column family), writes the writes (one write batch), and
 * decodes what was read with readers of its own ({@link StoredReader}). Requests that need a state
 * object (map iteration, emptiness, clear of many keys, put of many, read-modify-write adds) run
 * on the calling thread, after what was submitted before them has run. Gathering and those requests
 * hold this object's lock, which is never held while waiting for the pipeline: a mailbox that runs
 * callbacks at once (tests) may gather from the pipeline's thread.
 */
final class RequestServer<K> {
    /** The synchronous state behind an asynchronous one, the namespace a request without one uses, and its reader. */
    record Binding(AbstractLetheState<?, ?, ?> store, Object defaultNamespace, StoredReader<?> reader) {}

    /** Requests that write one key without reading it: gathered into a write batch. */
    private static final Set<StateRequestType> BATCHED_WRITES = EnumSet.of(StateRequestType.CLEAR,
            StateRequestType.VALUE_UPDATE, StateRequestType.LIST_ADD, StateRequestType.LIST_UPDATE,
            StateRequestType.LIST_ADD_ALL, StateRequestType.MAP_PUT, StateRequestType.MAP_REMOVE);

    /** Entries of a map iteration per request, as ForSt's executor loads them. */
    static final int MAP_CHUNK = 128;

    private final AbstractKeyedStateBackend<K> backend;
    private final RequestPipeline pipeline;
    private final Map<State, Binding> bindings = new IdentityHashMap<>();
    private final BatchCounts counts;
    private final BatchedReads reads;
    private final BatchedWrites writes;
    private volatile StateRequestHandler handler;

    RequestServer(AbstractKeyedStateBackend<K> backend, RequestPipeline pipeline, BatchCounts counts) {
        this.backend = backend;
        this.pipeline = pipeline;
        this.counts = counts;
        this.reads = new BatchedReads(counts);
        this.writes = new BatchedWrites(counts);
    }

    void setHandler(StateRequestHandler handler) {
        this.handler = handler;
    }

    StateRequestHandler handler() {
        return handler;
    }

    synchronized void bind(State state, AbstractLetheState<?, ?, ?> store, Object defaultNamespace) {
        bindings.put(state, new Binding(store, defaultNamespace, readerOf(store)));
    }

    /** Whether the pipeline has as many batches waiting or running as count as a full load. */
    boolean fullyLoaded() {
        return pipeline.fullyLoaded();
    }

    /**
     * Serves a batch as if in the order the operator issued it: its point reads and its writes of
     * one key gathered into steps for the pipeline (see {@link ServedBatch}), each other request
     * on this thread once what was gathered before it has run. Completes every request's future,
     * failed where serving it failed.
     */
    void serveBatch(List<StateRequest<?, ?, ?, ?>> requests) {
        counts.batch(requests.size());
        int next = 0;
        while (next < requests.size()) {
            Gathered gathered = gather(requests, next);
            if (!gathered.batch.isEmpty()) {
                pipeline.submit(gathered.batch);
            }
            gathered.complete();
            next = gathered.end;
            if (next < requests.size()) {
                serveOne(requests.get(next++));
            }
        }
    }

    /** Multi-gets and the point reads in them, write batches and the entries in them, so far (tests, metrics). */
    long[] batchCounts() {
        return counts.snapshot();
    }

    /**
     * What gathering a batch from one request on gave: the pipeline's steps, the outcomes of
     * requests already served (completed once the steps are submitted, so that callbacks that
     * run at once queue behind them), and where gathering stopped.
     */
    private static final class Gathered {
        final ServedBatch batch = new ServedBatch();
        final List<StateRequest<?, ?, ?, ?>> served = new ArrayList<>();
        final List<Object> outcomes = new ArrayList<>();
        int end;

        void served(StateRequest<?, ?, ?, ?> request, Object outcome) {
            served.add(request);
            outcomes.add(outcome);
        }

        void complete() {
            for (int i = 0; i < served.size(); i++) {
                RequestOutcome.settle(served.get(i), outcomes.get(i));
            }
        }
    }

    /**
     * Gathers requests from {@code from} on until one must run after everything before it (a
     * request of many keys, or a read-modify-write that may touch a key in flight), or to the end.
     */
    private synchronized Gathered gather(List<StateRequest<?, ?, ?, ?>> requests, int from) {
        Gathered gathered = new Gathered();
        gathered.end = requests.size();
        for (int i = from; i < requests.size(); i++) {
            StateRequest<?, ?, ?, ?> request = requests.get(i);
            try {
                if (!gatherOne(request, gathered)) {
                    gathered.end = i;
                    break;
                }
            } catch (Exception e) {
                gathered.served(request, new RequestOutcome.Failure(e));
            }
        }
        gathered.batch.add(reads.take());
        gathered.batch.add(writes.take());
        return gathered;
    }

    /**
     * Gathers a point read or a write of one key, or serves a read-modify-write of a key nothing
     * gathered or in flight touches; false if the request must wait for what came before it.
     */
    private boolean gatherOne(StateRequest<?, ?, ?, ?> request, Gathered gathered) throws Exception {
        Binding binding = binding(request);
        AbstractLetheState<K, Object, ?> store = bind(request, binding);
        byte[] key = pointKey(request, store);
        if (key == null) {
            return false;
        }
        ColumnFamilyHandle cf = store.columnFamily();
        StoredReader<?> reader = reader(request, binding);
        if (reader != null) {
            if (writes.pending(cf, key)) {
                gathered.batch.add(writes.take());
            }
            reads.add(store.db(), cf, key, request, reader);
            return true;
        }
        if (BATCHED_WRITES.contains(request.getRequestType())) {
            if (reads.pending(cf, key)) {
                gathered.batch.add(reads.take());
            }
            Exception failed = writes.add(store, key, request, () -> serveBound(request, store));
            if (failed != null) {
                gathered.served(request, new RequestOutcome.Failure(failed));
            }
            return true;
        }
        if (reads.pending(cf, key) || writes.pending(cf, key) || !pipeline.idle()) {
            return false;
        }
        gathered.served(request, serveBound(request, store));
        return true;
    }

    /** How to turn what a lookup found into the result of a point read, on the pipeline's thread; null for any other request. */
    private StoredReader<?> reader(StateRequest<?, ?, ?, ?> request, Binding binding) {
        return switch (request.getRequestType()) {
            case VALUE_GET, REDUCING_GET, AGGREGATING_GET, MAP_GET -> binding.reader();
            case LIST_GET -> stored -> {
                List<?> elements = (List<?>) binding.reader().read(stored);
                return loaded(request, elements == null ? Collections.emptyList() : elements);
            };
            case MAP_CONTAINS -> stored -> stored != null;
            default -> null;
        };
    }

    /** The reader of a state's stored values for the pipeline's thread. */
    private static StoredReader<?> readerOf(AbstractLetheState<?, ?, ?> store) {
        if (store instanceof LetheValueState<?, ?, ?> value) {
            return value.readerForAnotherThread();
        }
        if (store instanceof LetheListState<?, ?, ?> list) {
            return list.readerForAnotherThread();
        }
        if (store instanceof LetheMapState<?, ?, ?, ?> map) {
            return map.userValueReaderForAnotherThread();
        }
        if (store instanceof AbstractLetheAppendingState<?, ?, ?, ?, ?> appending) {
            return appending.readerForAnotherThread();
        }
        throw new IllegalArgumentException("No asynchronous access to Lethe state " + store.getClass().getName());
    }

    /**
     * The one engine key a request reads or writes, under the key and namespace {@link #bind}
     * set; null when it touches a range of keys (map iteration, emptiness, clear, put of many).
     */
    @SuppressWarnings("unchecked")
    private static byte[] pointKey(StateRequest<?, ?, ?, ?> request, AbstractLetheState<?, Object, ?> store)
            throws Exception {
        if (!(store instanceof LetheMapState)) {
            return store.currentKey();
        }
        LetheMapState<?, Object, Object, Object> map = (LetheMapState<?, Object, Object, Object>) store;
        return switch (request.getRequestType()) {
            case MAP_GET, MAP_CONTAINS, MAP_REMOVE -> map.currentKey(request.getPayload());
            case MAP_PUT -> map.currentKey(((Tuple2<Object, Object>) request.getPayload()).f0);
            default -> null;
        };
    }

    /**
     * Serves a request on this thread once everything submitted before it has run, and completes
     * its future, failed where serving it failed.
     */
    void serveOne(StateRequest<?, ?, ?, ?> request) {
        Object outcome;
        try {
            pipeline.drain();
            synchronized (this) {
                outcome = serveBound(request, bind(request, binding(request)));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            outcome = new RequestOutcome.Failure(e);
        } catch (Exception e) {
            outcome = new RequestOutcome.Failure(e);
        }
        RequestOutcome.settle(request, outcome);
    }

    private Binding binding(StateRequest<?, ?, ?, ?> request) {
        Binding binding = bindings.get(request.getState());
        if (binding == null) {
            throw new IllegalStateException("A state request for a state this Lethe backend did not create: "
                    + request.getState());
        }
        return binding;
    }

    /** The synchronous state that stores the request's state, set to the request's key and namespace. */
    private AbstractLetheState<K, Object, ?> bind(StateRequest<?, ?, ?, ?> request, Binding binding) {
        @SuppressWarnings("unchecked")
        RecordContext<K> context = (RecordContext<K>) request.getRecordContext();
        backend.setCurrentKeyAndKeyGroup(context.getKey(), context.getKeyGroup());
        Object namespace = request.getNamespace();
        @SuppressWarnings("unchecked")
        AbstractLetheState<K, Object, ?> store = (AbstractLetheState<K, Object, ?>) binding.store();
        store.setCurrentNamespace(namespace != null ? namespace : binding.defaultNamespace());
        return store;
    }

    private Object serveBound(StateRequest<?, ?, ?, ?> request, AbstractLetheState<K, Object, ?> store)
            throws Exception {
        StateRequestType type = request.getRequestType();
        switch (type) {
            case CLEAR:
                store.clear();
                return null;
            case VALUE_GET:
            case VALUE_UPDATE:
                return serveValue(type, store, request.getPayload());
            case LIST_GET:
            case LIST_ADD:
            case LIST_UPDATE:
            case LIST_ADD_ALL:
                return serveList(request, store);
            case REDUCING_GET:
            case AGGREGATING_GET:
                return appending(store).getInternal();
            case REDUCING_ADD:
            case AGGREGATING_ADD:
                appending(store).updateInternal(request.getPayload());
                return null;
            case CUSTOMIZED:
                return serveCustomized(store, request.getPayload());
            default:
                return serveMap(request, store);
        }
    }

    @SuppressWarnings("unchecked")
    private static Object serveValue(StateRequestType type, AbstractLetheState<?, ?, ?> store, Object payload)
            throws Exception {
        InternalValueState<?, ?, Object> value = (InternalValueState<?, ?, Object>) store;
        if (type == StateRequestType.VALUE_GET) {
            return value.value();
        }
        value.update(payload);
        return null;
    }

    @SuppressWarnings("unchecked")
    private Object serveList(StateRequest<?, ?, ?, ?> request, AbstractLetheState<?, ?, ?> store) throws Exception {
        InternalListState<?, ?, Object> list = (InternalListState<?, ?, Object>) store;
        Object payload = request.getPayload();
        switch (request.getRequestType()) {
            case LIST_GET:
                Iterable<Object> elements = list.get();
                return loaded(request, elements == null ? Collections.emptyList() : copy(elements));
            case LIST_ADD:
                list.add(payload);
                return null;
            case LIST_UPDATE:
                list.update((List<Object>) payload);
                return null;
            default:
                list.addAll((List<Object>) payload);
                return null;
        }
    }

    @SuppressWarnings("unchecked")
    private Object serveMap(StateRequest<?, ?, ?, ?> request, AbstractLetheState<?, ?, ?> store) throws Exception {
        InternalMapState<?, ?, Object, Object> map = (InternalMapState<?, ?, Object, Object>) store;
        Object payload = request.getPayload();
        switch (request.getRequestType()) {
            case MAP_GET:
                return map.get(payload);
            case MAP_CONTAINS:
                return map.contains(payload);
            case MAP_PUT:
                Tuple2<Object, Object> entry = (Tuple2<Object, Object>) payload;
                map.put(entry.f0, entry.f1);
                return null;
            case MAP_PUT_ALL:
                map.putAll((Map<Object, Object>) payload);
                return null;
            case MAP_REMOVE:
                map.remove(payload);
                return null;
            case MAP_IS_EMPTY:
                return map.isEmpty();
            case MAP_ITER:
            case MAP_ITER_KEY:
            case MAP_ITER_VALUE:
                return chunk(request, store, request.getRequestType(), store.currentKey(), null);
            case ITERATOR_LOADING:
                MapResume resume = (MapResume) payload;
                return chunk(request, store, resume.type(), resume.prefix(), resume.from());
            default:
                throw new UnsupportedOperationException("Lethe does not serve state requests of type "
                        + request.getRequestType());
        }
    }

    @SuppressWarnings("unchecked")
    private static Object serveCustomized(AbstractLetheState<?, ?, ?> store, Object payload) throws Exception {
        if (!(payload instanceof AppendingAdd add)) {
            throw new UnsupportedOperationException("Lethe does not serve the customized state request " + payload);
        }
        ((InternalAppendingState<?, ?, Object, ?, ?>) store).add(add.value());
        return null;
    }

    @SuppressWarnings("unchecked")
    private static InternalAppendingState<?, ?, ?, Object, ?> appending(AbstractLetheState<?, ?, ?> store) {
        return (InternalAppendingState<?, ?, ?, Object, ?>) store;
    }

    private <T> LoadedStateIterator<T> loaded(StateRequest<?, ?, ?, ?> request, List<T> elements) {
        return new LoadedStateIterator<>(request.getState(), request.getRequestType(), handler, elements, null);
    }

    /**
     * The next {@link #MAP_CHUNK} entries (or their keys or values) of a map from engine key {@code from}
     * (null: the first), with where to go on if there may be more.
     */
    @SuppressWarnings("unchecked")
    private LoadedStateIterator<Object> chunk(StateRequest<?, ?, ?, ?> request, AbstractLetheState<?, ?, ?> store,
            StateRequestType type, byte[] prefix, byte[] from) throws IOException {
        MapChunk<Object, Object> chunk =
                ((LetheMapState<?, ?, Object, Object>) store).chunk(prefix, from, MAP_CHUNK);
        List<Object> elements = new ArrayList<>(chunk.entries().size());
        for (Map.Entry<Object, Object> e : chunk.entries()) {
            elements.add(type == StateRequestType.MAP_ITER_KEY ? e.getKey()
                    : type == StateRequestType.MAP_ITER_VALUE ? e.getValue() : e);
        }
        MapResume rest = chunk.next() == null ? null : new MapResume(type, prefix, chunk.next());
        return new LoadedStateIterator<>(request.getState(), type, handler, elements, rest);
    }

    private static <T> List<T> copy(Iterable<T> elements) {
        List<T> out = new ArrayList<>();
        for (T e : elements) {
            out.add(e);
        }
        return out;
    }
}
