package io.lethe.flink.state;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSchemaCompatibility;
import org.apache.flink.api.common.typeutils.base.ListSerializer;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.api.common.typeutils.base.MapSerializer;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.runtime.state.RegisteredKeyValueStateBackendMetaInfo;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.runtime.state.ttl.TtlValue;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.List;
import java.util.Map;

/**
 * The TTL serializers of synchronous and asynchronous state: Flink judges them incompatible; in the
 * restored form they are compatible as they are, write the same bytes, and other serializers stay.
 */
class TtlSerializerFormsTest {
    private static TypeSerializer<TtlValue<String>> sync() {
        return new org.apache.flink.runtime.state.ttl.TtlStateFactory.TtlSerializer<>(
                LongSerializer.INSTANCE, StringSerializer.INSTANCE);
    }

    private static TypeSerializer<TtlValue<String>> async() {
        return new org.apache.flink.runtime.state.v2.ttl.TtlStateFactory.TtlSerializer<>(
                LongSerializer.INSTANCE, StringSerializer.INSTANCE);
    }

    /** The state's meta information as a restore reads it, after a snapshot with {@code restored}. */
    private static <T> RegisteredKeyValueStateBackendMetaInfo<VoidNamespace, T> restoredMeta(TypeSerializer<T> restored) {
        RegisteredKeyValueStateBackendMetaInfo<VoidNamespace, T> written = new RegisteredKeyValueStateBackendMetaInfo<>(
                StateDescriptor.Type.VALUE, "s", VoidNamespaceSerializer.INSTANCE, restored);
        return new RegisteredKeyValueStateBackendMetaInfo<>(written.snapshot());
    }

    /** Flink's judgement, as the backend asks for it, of {@code fresh} for state written with {@code restored}. */
    private static <T> TypeSerializerSchemaCompatibility<T> compatibility(TypeSerializer<T> restored,
            TypeSerializer<T> fresh) {
        return restoredMeta(restored).updateStateSerializer(fresh);
    }

    /** The same, with {@code fresh} in the restored form first (as the backend registers it). */
    private static <T> TypeSerializerSchemaCompatibility<T> formedCompatibility(TypeSerializer<T> restored,
            TypeSerializer<T> fresh) {
        RegisteredKeyValueStateBackendMetaInfo<VoidNamespace, T> meta = restoredMeta(restored);
        return meta.updateStateSerializer(
                TtlSerializerForms.inRestoredForm(fresh, meta.getPreviousStateSerializerSnapshot()));
    }

    private static <T> byte[] bytes(TypeSerializer<T> serializer, T value) throws IOException {
        DataOutputSerializer out = new DataOutputSerializer(64);
        serializer.serialize(value, out);
        return out.getCopyOfBuffer();
    }

    @Test
    void flinkJudgesTheTwoKindsIncompatible() {
        assertTrue(compatibility(sync(), async()).isIncompatible());
        assertTrue(compatibility(async(), sync()).isIncompatible());
    }

    @Test
    void eachKindTakesTheOthersFormAndWritesTheSameBytes() throws IOException {
        TtlValue<String> value = new TtlValue<>("seven", 1_700_000_000_000L);
        for (boolean restoredSync : new boolean[] {true, false}) {
            TypeSerializer<TtlValue<String>> restored = restoredSync ? sync() : async();
            TypeSerializer<TtlValue<String>> fresh = restoredSync ? async() : sync();
            TypeSerializer<TtlValue<String>> formed =
                    TtlSerializerForms.inRestoredForm(fresh, restored.snapshotConfiguration());
            assertSame(restored.getClass(), formed.getClass());
            assertTrue(formedCompatibility(restored, fresh).isCompatibleAsIs(), "restored sync: " + restoredSync);
            assertArrayEquals(bytes(fresh, value), bytes(formed, value));
            assertArrayEquals(bytes(restored, value), bytes(formed, value));
        }
    }

    @Test
    void listsAndMapsOfTtlValuesTakeTheRestoredForm() {
        TypeSerializer<List<TtlValue<String>>> syncList = new ListSerializer<>(sync());
        TypeSerializer<List<TtlValue<String>>> asyncList = new ListSerializer<>(async());
        assertTrue(compatibility(syncList, asyncList).isIncompatible());
        assertTrue(formedCompatibility(syncList, asyncList).isCompatibleAsIs());

        TypeSerializer<Map<Long, TtlValue<String>>> syncMap = new MapSerializer<>(LongSerializer.INSTANCE, sync());
        TypeSerializer<Map<Long, TtlValue<String>>> asyncMap = new MapSerializer<>(LongSerializer.INSTANCE, async());
        assertTrue(compatibility(asyncMap, syncMap).isIncompatible());
        assertTrue(formedCompatibility(asyncMap, syncMap).isCompatibleAsIs());
        assertInstanceOf(MapSerializer.class,
                TtlSerializerForms.inRestoredForm(syncMap, asyncMap.snapshotConfiguration()));
    }

    @Test
    void otherSerializersAndFreshStatesStayAsTheyAre() {
        TypeSerializer<String> plain = StringSerializer.INSTANCE;
        assertSame(plain, TtlSerializerForms.inRestoredForm(plain, plain.snapshotConfiguration()));
        TypeSerializer<TtlValue<String>> same = sync();
        assertSame(same, TtlSerializerForms.inRestoredForm(same, sync().snapshotConfiguration()));
        assertSame(same, TtlSerializerForms.inRestoredForm(same, null));
    }
}
