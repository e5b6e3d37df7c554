package io.lethe.flink.expiry;

import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.base.ListSerializer;
import org.apache.flink.api.common.typeutils.base.MapSerializer;
import org.apache.flink.runtime.state.ttl.TtlAwareSerializer;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;

/** Picks the expiry policy of a state from what it stores. */
public final class StateExpiries {
    private StateExpiries() {}

    /**
     * The expiry of a state with this serializer, of the operator {@code window} describes: its
     * window contents (by name, with a {@code TimeWindow} namespace) carry window delete keys,
     * values with Flink's TTL timestamps carry those, anything else the maximum delete key.
     *
     * @param floor the largest delete key the state issued before (from a restore), 0 if none
     */
    public static StateExpiry of(String stateName, StateDescriptor.Type type, TypeSerializer<?> stateSerializer,
            TypeSerializer<?> namespaceSerializer, WindowExpiry window, long floor) {
        if (holdsWindowContents(stateName, type, namespaceSerializer, window)) {
            return new WindowContentsExpiry(stateName, window, floor);
        }
        if (carriesTtlTimestamps(stateSerializer)) {
            return new TtlExpiry(stateName, type, floor);
        }
        return new NoExpiry(stateName, floor, window.otherWindowsReason());
    }

    /** Whether the state holds the contents of {@code window}'s windows (by name, with a TimeWindow namespace). */
    public static boolean holdsWindowContents(String stateName, StateDescriptor.Type type,
            TypeSerializer<?> namespaceSerializer, WindowExpiry window) {
        return window.isWindowOperator() && WindowExpiry.CONTENTS_STATE.equals(stateName)
                && namespaceSerializer instanceof TimeWindow.Serializer && type != StateDescriptor.Type.MAP;
    }

    /**
     * Whether the values carry Flink's TTL timestamps: its TTL serializer around the value (of a list
     * the element, of a map the user value), of synchronous or asynchronous state (two classes of
     * the same layout: the timestamp, then the value).
     */
    public static boolean carriesTtlTimestamps(TypeSerializer<?> stateSerializer) {
        if (TtlAwareSerializer.isSerializerTtlEnabled(stateSerializer)) {
            return true;
        }
        TypeSerializer<?> value = stateSerializer instanceof ListSerializer<?> list ? list.getElementSerializer()
                : stateSerializer instanceof MapSerializer<?, ?> map ? map.getValueSerializer() : stateSerializer;
        return org.apache.flink.runtime.state.v2.ttl.TtlStateFactory.isTtlStateSerializer(value);
    }
}
