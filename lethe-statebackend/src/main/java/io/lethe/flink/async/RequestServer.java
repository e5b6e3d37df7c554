package io.lethe.flink.async;

import io.lethe.engine.ColumnFamilyHandle;
import io.lethe.flink.state.AbstractLetheAppendingState;
import io.lethe.flink.state.AbstractLetheState;
import io.lethe.flink.state.LetheListState;
import io.lethe.flink.state.LetheMapState;
import io.lethe.flink.state.LetheValueState;
import io.lethe.flink.state.MapChunk;

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
 * namespace (or the state's default) the namespace. Used on the task thread only.
 */
final class RequestServer<K> {
    /** The synchronous state behind an asynchronous one, and the namespace a request without one uses. */
    record Binding(AbstractLetheState<?, ?, ?> store, Object defaultNamespace) {}

    /** Requests that write one key without reading it: gathered into a write batch. */
    private static final Set<StateRequestType> BATCHED_WRITES = EnumSet.of(StateRequestType.CLEAR,
            StateRequestType.VALUE_UPDATE, StateRequestType.LIST_ADD, StateRequestType.LIST_UPDATE,
            StateRequestType.LIST_ADD_ALL, StateRequestType.MAP_PUT, StateRequestType.MAP_REMOVE);

    /** Entries of a map iteration per request, as ForSt's executor loads them. */
    static final int MAP_CHUNK = 128;

    private final AbstractKeyedStateBackend<K> backend;
    private final Map<State, Binding> bindings = new IdentityHashMap<>();
    private final BatchedReads reads = new BatchedReads();
    private final BatchedWrites writes = new BatchedWrites();
    private StateRequestHandler handler;

    RequestServer(AbstractKeyedStateBackend<K> backend) {
        this.backend = backend;
    }

    void setHandler(StateRequestHandler handler) {
        this.handler = handler;
    }

    StateRequestHandler handler() {
        return handler;
    }

    void bind(State state, AbstractLetheState<?, ?, ?> store, Object defaultNamespace) {
        bindings.put(state, new Binding(store, defaultNamespace));
    }

    /**
     * Serves a batch as if in the order the operator issued it, with its point reads gathered and
     * answered together (see {@link BatchedReads}) and its writes of one key gathered into one
     * write batch (see {@link BatchedWrites}). Reads and writes of different keys commute; where a
     * request reads or writes a key that a gathered request of the other kind touches, or touches
     * keys it cannot name up front, what was gathered is answered or written first. Completes every
     * request's future, failed where serving it failed.
     */
    void serveBatch(List<StateRequest<?, ?, ?, ?>> requests) {
        for (StateRequest<?, ?, ?, ?> request : requests) {
            try {
                AbstractLetheState<K, Object, ?> store = gatherOrBind(request);
                if (store != null) {
                    RequestOutcome.complete(request, serveBound(request, store));
                }
            } catch (Exception e) {
                RequestOutcome.fail(request, e);
            }
        }
        reads.flush();
        writes.flush();
    }

    /** Point reads answered in batches so far: multi-gets, the reads in them; write batches, their entries. */
    long[] batchCounts() {
        return new long[] {reads.lookups(), reads.reads(), writes.writes(), writes.entries()};
    }

    /**
     * Gathers a point read or a write of one key and returns null. Otherwise answers and writes
     * what was gathered where the request may depend on it, and returns its state, bound to its key
     * and namespace, to serve it with now.
     */
    private AbstractLetheState<K, Object, ?> gatherOrBind(StateRequest<?, ?, ?, ?> request) throws Exception {
        AbstractLetheState<K, Object, ?> store = bind(request);
        byte[] key = pointKey(request, store);
        if (key == null) {
            return flushed(reads.flush() | writes.flush(), request, store);
        }
        ColumnFamilyHandle cf = store.columnFamily();
        BatchedReads.Decoder decoder = decoder(request, store);
        if (decoder != null) {
            if (writes.pending(cf, key)) {
                writes.flush();
            }
            reads.add(store.db(), cf, key, request, decoder);
            return null;
        }
        boolean flushed = reads.pending(cf, key) && reads.flush();
        if (BATCHED_WRITES.contains(request.getRequestType())) {
            AbstractLetheState<K, Object, ?> bound = flushed ? bind(request) : store;
            writes.add(bound, key, request, () -> serveBound(request, bound));
            return null;
        }
        // A read-modify-write of one key: it reads what was written before it.
        flushed |= writes.pending(cf, key) && writes.flush();
        return flushed(flushed, request, store);
    }

    /** Answering reads and writing writes completes futures, which may run code that moves the current key. */
    private AbstractLetheState<K, Object, ?> flushed(boolean flushed, StateRequest<?, ?, ?, ?> request,
            AbstractLetheState<K, Object, ?> store) {
        return flushed ? bind(request) : store;
    }

    /** How to turn what a lookup found into the result of a point read; null for any other request. */
    @SuppressWarnings("unchecked")
    private BatchedReads.Decoder decoder(StateRequest<?, ?, ?, ?> request, AbstractLetheState<K, Object, ?> store) {
        return switch (request.getRequestType()) {
            case VALUE_GET -> ((LetheValueState<K, Object, Object>) store)::valueOf;
            case LIST_GET -> stored -> {
                List<Object> elements = ((LetheListState<K, Object, Object>) store).listOf(stored);
                return loaded(request, elements == null ? Collections.emptyList() : elements);
            };
            case REDUCING_GET, AGGREGATING_GET ->
                    ((AbstractLetheAppendingState<K, Object, ?, ?, ?>) store)::storedValueOf;
            case MAP_GET -> ((LetheMapState<K, Object, Object, Object>) store)::userValueOf;
            case MAP_CONTAINS -> stored -> stored != null;
            default -> null;
        };
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
     * Serves a request on its own (outside a batch), after anything a batch being served gathered,
     * and completes its future, failed where serving it failed.
     */
    void serveOne(StateRequest<?, ?, ?, ?> request) {
        reads.flush();
        writes.flush();
        Object result;
        try {
            result = serveBound(request, bind(request));
        } catch (Exception e) {
            RequestOutcome.fail(request, e);
            return;
        }
        RequestOutcome.complete(request, result);
    }

    /** The synchronous state that stores the request's state, set to the request's key and namespace. */
    private AbstractLetheState<K, Object, ?> bind(StateRequest<?, ?, ?, ?> request) {
        Binding binding = bindings.get(request.getState());
        if (binding == null) {
            throw new IllegalStateException("A state request for a state this Lethe backend did not create: "
                    + request.getState());
        }
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
