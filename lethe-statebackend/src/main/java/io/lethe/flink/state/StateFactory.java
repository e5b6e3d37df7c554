package io.lethe.flink.state;

import io.lethe.engine.ColumnFamilyHandle;

import org.apache.flink.api.common.state.AggregatingStateDescriptor;
import org.apache.flink.api.common.state.ReducingStateDescriptor;
import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.runtime.state.RegisteredKeyValueStateBackendMetaInfo;
import org.apache.flink.util.FlinkRuntimeException;

import java.util.List;
import java.util.Map;

/** Creates the Lethe state object of a descriptor, and brings one up to date when it is registered again. */
public final class StateFactory {
    private StateFactory() {}

    /** A new state object for {@code desc}, writing to the registered state's column family with its expiry. */
    @SuppressWarnings("unchecked")
    public static <K, N, SV> AbstractLetheState<K, N, SV> create(StateDescriptor<?, SV> desc,
            RegisteredState registered, LetheStateContext<K> context) {
        AbstractLetheState<K, N, SV> state = create(desc, registered.columnFamily(),
                (RegisteredKeyValueStateBackendMetaInfo<N, SV>) registered.metaInfo(), context);
        state.setExpiry(registered.expiry());
        return state;
    }

    /** Points an existing state object at the registered state's current serializers, expiry and functions. */
    @SuppressWarnings("unchecked")
    public static <K, N, SV> void reconfigure(AbstractLetheState<K, N, SV> state, StateDescriptor<?, SV> desc,
            RegisteredState registered) {
        RegisteredKeyValueStateBackendMetaInfo<N, SV> meta =
                (RegisteredKeyValueStateBackendMetaInfo<N, SV>) registered.metaInfo();
        state.update(registered.columnFamily(), meta.getNamespaceSerializer(), meta.getStateSerializer(),
                desc.getDefaultValue());
        state.setExpiry(registered.expiry());
        if (state instanceof LetheReducingState<K, N, SV> reducing) {
            reducing.setReduceFunction(((ReducingStateDescriptor<SV>) desc).getReduceFunction());
        } else if (state instanceof LetheAggregatingState) {
            ((LetheAggregatingState<K, N, Object, SV, Object>) state).setAggregateFunction(
                    ((AggregatingStateDescriptor<Object, SV, Object>) desc).getAggregateFunction());
        }
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static <K, N, SV> AbstractLetheState<K, N, SV> create(StateDescriptor<?, SV> desc,
            ColumnFamilyHandle cf, RegisteredKeyValueStateBackendMetaInfo<N, SV> meta, LetheStateContext<K> context) {
        TypeSerializer<N> ns = meta.getNamespaceSerializer();
        TypeSerializer<SV> vs = meta.getStateSerializer();
        SV dv = desc.getDefaultValue();
        switch (desc.getType()) {
            case VALUE:
                return new LetheValueState<>(cf, ns, vs, dv, context);
            case LIST:
                return (AbstractLetheState) new LetheListState<>(cf, ns, (TypeSerializer) vs, (List) dv, context);
            case MAP:
                return (AbstractLetheState) new LetheMapState<>(cf, ns, (TypeSerializer) vs, (Map) dv, context);
            case REDUCING:
                return new LetheReducingState<>(cf, ns, vs, dv, ((ReducingStateDescriptor<SV>) desc).getReduceFunction(),
                        context);
            case AGGREGATING:
                return new LetheAggregatingState<>(cf, ns, vs, dv,
                        ((AggregatingStateDescriptor<Object, SV, Object>) desc).getAggregateFunction(), context);
            default:
                throw new FlinkRuntimeException("State " + desc.getName() + " of type " + desc.getType()
                        + " is not supported by the Lethe state backend");
        }
    }
}
