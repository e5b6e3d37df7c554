package io.lethe.flink.async;

import io.lethe.engine.ColumnFamilyHandle;

import java.nio.ByteBuffer;

/** One key in one column family, equal by content: what gathered reads and writes are checked against. */
record EngineKey(ColumnFamilyHandle cf, ByteBuffer bytes) {
    static EngineKey of(ColumnFamilyHandle cf, byte[] key) {
        return new EngineKey(cf, ByteBuffer.wrap(key));
    }
}
