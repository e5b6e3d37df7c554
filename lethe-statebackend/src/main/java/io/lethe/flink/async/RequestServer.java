package io.lethe.flink.async;

import io.lethe.flink.state.AbstractLetheState;

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

import java.util.AbstractMap;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * Serves one state request of an asynchronous state with the synchronous Lethe state that stores
 * it: the same column family, keys and values, so both kinds of operator read each other's
 * snapshots. The request's record context gives the key; its namespace (or the state's default)
 * the namespace. Used on the task thread only.
 */
final class RequestServer<K> {
    /** The synchronous state behind an asynchronous one, and the namespace a request without one uses. */
    record Binding(AbstractLetheState<?, ?, ?> store, Object defaultNamespace) {}

    private final AbstractKeyedStateBackend<K> backend;
    private final Map<State, Binding> bindings = new IdentityHashMap<>();
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

    /** The request's result: what its future completes with. */
    Object serve(StateRequest<?, ?, ?, ?> request) throws Exception {
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
                List<Map.Entry<Object, Object>> entries = new ArrayList<>();
                for (Map.Entry<Object, Object> e : map.entries()) {
                    entries.add(new AbstractMap.SimpleImmutableEntry<>(e.getKey(), e.getValue()));
                }
                return loaded(request, entries);
            case MAP_ITER_KEY:
                return loaded(request, copy(map.keys()));
            case MAP_ITER_VALUE:
                return loaded(request, copy(map.values()));
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
        return new LoadedStateIterator<>(request.getState(), request.getRequestType(), handler, elements);
    }

    private static <T> List<T> copy(Iterable<T> elements) {
        List<T> out = new ArrayList<>();
        for (T e : elements) {
            out.add(e);
        }
        return out;
    }
}
