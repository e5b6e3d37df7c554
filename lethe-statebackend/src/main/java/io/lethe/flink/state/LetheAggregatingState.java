package io.lethe.flink.state;

import io.lethe.engine.ColumnFamilyHandle;

import org.apache.flink.api.common.functions.AggregateFunction;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.runtime.state.internal.InternalAggregatingState;

/** {@code AggregatingState} on Lethe: the accumulator is stored; read, add, write. */
public class LetheAggregatingState<K, N, IN, ACC, OUT> extends AbstractLetheAppendingState<K, N, IN, ACC, OUT>
        implements InternalAggregatingState<K, N, IN, ACC, OUT> {
    private AggregateFunction<IN, ACC, OUT> aggregateFunction;

    public LetheAggregatingState(ColumnFamilyHandle cf, TypeSerializer<N> namespaceSerializer,
            TypeSerializer<ACC> accumulatorSerializer, ACC defaultValue,
            AggregateFunction<IN, ACC, OUT> aggregateFunction, LetheStateContext<K> context) {
        super(cf, namespaceSerializer, accumulatorSerializer, defaultValue, context);
        this.aggregateFunction = aggregateFunction;
    }

    public void setAggregateFunction(AggregateFunction<IN, ACC, OUT> aggregateFunction) {
        this.aggregateFunction = aggregateFunction;
    }

    @Override
    ACC mergeValues(ACC a, ACC b) {
        return aggregateFunction.merge(a, b);
    }

    @Override
    public OUT get() throws Exception {
        ACC acc = getInternal();
        return acc == null ? null : aggregateFunction.getResult(acc);
    }

    @Override
    public void add(IN value) throws Exception {
        byte[] key = currentKeyBytes();
        ACC acc = getInternal(key);
        if (acc == null) {
            acc = aggregateFunction.createAccumulator();
        }
        updateInternal(key, aggregateFunction.add(value, acc));
    }
}
