package io.lethe.flink.state;

import io.lethe.engine.ColumnFamilyHandle;

import org.apache.flink.api.common.functions.ReduceFunction;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.runtime.state.internal.InternalReducingState;

/** {@code ReducingState} on Lethe: read, reduce, write. */
public class LetheReducingState<K, N, V> extends AbstractLetheAppendingState<K, N, V, V, V>
        implements InternalReducingState<K, N, V> {
    private ReduceFunction<V> reduceFunction;

    public LetheReducingState(ColumnFamilyHandle cf, TypeSerializer<N> namespaceSerializer,
            TypeSerializer<V> valueSerializer, V defaultValue, ReduceFunction<V> reduceFunction,
            LetheStateContext<K> context) {
        super(cf, namespaceSerializer, valueSerializer, defaultValue, context);
        this.reduceFunction = reduceFunction;
    }

    public void setReduceFunction(ReduceFunction<V> reduceFunction) {
        this.reduceFunction = reduceFunction;
    }

    @Override
    V mergeValues(V a, V b) throws Exception {
        return reduceFunction.reduce(a, b);
    }

    @Override
    public V get() throws Exception {
        return getInternal();
    }

    @Override
    public void add(V value) throws Exception {
        byte[] key = currentKeyBytes();
        V old = getInternal(key);
        updateInternal(key, old == null ? value : reduceFunction.reduce(old, value));
    }
}
