package io.lethe.flink.timers;

import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.runtime.state.CompositeKeySerializationUtils;
import org.apache.flink.util.FlinkRuntimeException;

import java.io.IOException;

/**
 * Turns a queue's elements into engine rows and back: {@code key-group prefix | element bytes},
 * the layout of Flink's RocksDB timer rows and of priority-queue rows in canonical savepoints.
 * Shares its buffers across the queue's key groups. Not thread-safe.
 */
final class RowCodec<T> {
    private final TypeSerializer<T> serializer;
    private final int prefixBytes;
    private final DataOutputSerializer out = new DataOutputSerializer(64);
    private final DataInputDeserializer in = new DataInputDeserializer();

    RowCodec(TypeSerializer<T> serializer, int prefixBytes) {
        this.serializer = serializer;
        this.prefixBytes = prefixBytes;
    }

    int prefixBytes() {
        return prefixBytes;
    }

    /** The key-group prefix alone (an iterator's lower bound). */
    byte[] prefix(int keyGroup) {
        try {
            out.clear();
            CompositeKeySerializationUtils.writeKeyGroup(keyGroup, prefixBytes, out);
            return out.getCopyOfBuffer();
        } catch (IOException e) {
            throw new FlinkRuntimeException("Failed to write a key-group prefix", e);
        }
    }

    byte[] row(int keyGroup, T element) {
        try {
            out.clear();
            CompositeKeySerializationUtils.writeKeyGroup(keyGroup, prefixBytes, out);
            serializer.serialize(element, out);
            return out.getCopyOfBuffer();
        } catch (IOException e) {
            throw new FlinkRuntimeException("Failed to serialize a timer", e);
        }
    }

    T element(byte[] row) {
        try {
            in.setBuffer(row, prefixBytes, row.length - prefixBytes);
            return serializer.deserialize(in);
        } catch (IOException e) {
            throw new FlinkRuntimeException("Failed to deserialize a timer", e);
        }
    }
}
