package io.lethe.flink.async;

import org.apache.flink.api.common.functions.AggregateFunction;
import org.apache.flink.api.common.state.v2.StateFuture;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.runtime.asyncprocessing.StateRequestHandler;
import org.apache.flink.runtime.asyncprocessing.StateRequestType;
import org.apache.flink.runtime.state.v2.AbstractAggregatingState;

/** Flink's asynchronous aggregating state whose add is one request ({@link AppendingAdd}). */
final class LetheAsyncAggregatingState<K, N, IN, ACC, OUT> extends AbstractAggregatingState<K, N, IN, ACC, OUT> {

    LetheAsyncAggregatingState(StateRequestHandler handler, AggregateFunction<IN, ACC, OUT> aggregateFunction,
            TypeSerializer<ACC> serializer) {
        super(handler, aggregateFunction, serializer);
    }

    @Override
    public StateFuture<Void> asyncAdd(IN value) {
        return stateRequestHandler.handleRequest(this, StateRequestType.CUSTOMIZED, new AppendingAdd(value));
    }

    @Override
    public void add(IN value) {
        stateRequestHandler.handleRequestSync(this, StateRequestType.CUSTOMIZED, new AppendingAdd(value));
    }
}
