package io.lethe.flink.state;

import org.apache.flink.api.common.typeutils.CompositeTypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.base.ListSerializer;
import org.apache.flink.api.common.typeutils.base.ListSerializerSnapshot;
import org.apache.flink.api.common.typeutils.base.MapSerializer;
import org.apache.flink.api.common.typeutils.base.MapSerializerSnapshot;

/**
 * Flink writes the values of state with a TTL with one of two serializer classes: {@code
 * TtlStateFactory.TtlSerializer} of synchronous state ({@code org.apache.flink.runtime.state.ttl})
 * and of asynchronous state ({@code ...state.v2.ttl}). Both write the same bytes (the last access
 * timestamp, then the value, as one composite with the same snapshot version), but Flink judges each
 * incompatible with the other, so a savepoint of a job with TTL state would not restore into the same
 * job with the other kind of state. Before its compatibility check, the backend gives the new
 * serializer the form of the restored one: the restored class around the new timestamp and value
 * serializers. Lists of TTL values (list state) and maps with TTL values (map state) likewise.
 *
 * <p>Stateless.
 */
public final class TtlSerializerForms {
    private TtlSerializerForms() {}

    /**
     * {@code fresh} in the form of the serializer that wrote {@code restored} (null: nothing restored),
     * where the two are TTL serializers of the two kinds; otherwise {@code fresh} itself.
     */
    @SuppressWarnings("unchecked")
    public static <T> TypeSerializer<T> inRestoredForm(TypeSerializer<T> fresh, TypeSerializerSnapshot<T> restored) {
        return restored == null ? fresh : (TypeSerializer<T>) convert(fresh, restored);
    }

    private static TypeSerializer<?> convert(TypeSerializer<?> fresh, TypeSerializerSnapshot<?> restored) {
        if (fresh instanceof ListSerializer<?> list && restored instanceof ListSerializerSnapshot<?> old) {
            TypeSerializer<?> element = convert(list.getElementSerializer(), old.getElementSerializerSnapshot());
            return element == list.getElementSerializer() ? fresh : new ListSerializer<>(element);
        }
        if (fresh instanceof MapSerializer<?, ?> map && restored instanceof MapSerializerSnapshot<?, ?> old) {
            TypeSerializer<?> value = convert(map.getValueSerializer(), old.getNestedSerializerSnapshots()[1]);
            return value == map.getValueSerializer() ? fresh : new MapSerializer<>(map.getKeySerializer(), value);
        }
        if (fresh instanceof org.apache.flink.runtime.state.ttl.TtlStateFactory.TtlSerializer<?>
                && restored instanceof org.apache.flink.runtime.state.v2.ttl.TtlStateFactory.TtlSerializerSnapshot<?>) {
            TypeSerializer<?>[] fields = fields(fresh);
            return asyncForm(fields[0], fields[1]);
        }
        if (fresh instanceof org.apache.flink.runtime.state.v2.ttl.TtlStateFactory.TtlSerializer<?>
                && restored instanceof org.apache.flink.runtime.state.ttl.TtlStateFactory.TtlSerializerSnapshot<?>) {
            TypeSerializer<?>[] fields = fields(fresh);
            return syncForm(fields[0], fields[1]);
        }
        return fresh;
    }

    @SuppressWarnings("unchecked")
    private static <T> TypeSerializer<?> asyncForm(TypeSerializer<?> timestamp, TypeSerializer<T> value) {
        return new org.apache.flink.runtime.state.v2.ttl.TtlStateFactory.TtlSerializer<>(
                (TypeSerializer<Long>) timestamp, value);
    }

    @SuppressWarnings("unchecked")
    private static <T> TypeSerializer<?> syncForm(TypeSerializer<?> timestamp, TypeSerializer<T> value) {
        return new org.apache.flink.runtime.state.ttl.TtlStateFactory.TtlSerializer<>(
                (TypeSerializer<Long>) timestamp, value);
    }

    /**
     * The timestamp's and the value's serializer of a TTL serializer of either kind (its snapshot
     * names them; the classes keep their own accessors package-private).
     */
    private static TypeSerializer<?>[] fields(TypeSerializer<?> ttl) {
        TypeSerializerSnapshot<?>[] nested =
                ((CompositeTypeSerializerSnapshot<?, ?>) ttl.snapshotConfiguration()).getNestedSerializerSnapshots();
        return new TypeSerializer<?>[] {nested[0].restoreSerializer(), nested[1].restoreSerializer()};
    }
}
