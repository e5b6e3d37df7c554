package io.lethe.flink.async;

import org.apache.flink.api.common.functions.ReduceFunction;
import org.apache.flink.api.common.state.v2.StateFuture;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.runtime.asyncprocessing.StateRequestHandler;
import org.apache.flink.runtime.asyncprocessing.StateRequestType;
import org.apache.flink.runtime.state.v2.AbstractReducingState;

/** Flink's asynchronous reducing state whose add is one request ({@link AppendingAdd}). */
final class LetheAsyncReducingState<K, N, V> extends AbstractReducingState<K, N, V> {

    LetheAsyncReducingState(StateRequestHandler handler, ReduceFunction<V> reduceFunction, TypeSerializer<V> serializer) {
        super(handler, reduceFunction, serializer);
    }

    @Override
    public StateFuture<Void> asyncAdd(V value) {
        return stateRequestHandler.handleRequest(this, StateRequestType.CUSTOMIZED, new AppendingAdd(value));
    }

    @Override
    public void add(V value) {
        stateRequestHandler.handleRequestSync(this, StateRequestType.CUSTOMIZED, new AppendingAdd(value));
    }
}
