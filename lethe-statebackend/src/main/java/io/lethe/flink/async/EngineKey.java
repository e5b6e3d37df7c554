package io.lethe.flink.async;

import io.lethe.engine.ColumnFamilyHandle;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * One key in one column family, equal by content: what gathered reads and writes are checked
 * against. Column families are equal by identity.
 *
 * <p>The hash reads the key eight bytes at a time and is computed once. SQL operators key map
 * state by whole rows (a few hundred bytes), and a batch hashes each of its keys at least twice;
 * a byte-at-a-time hash (as {@code ByteBuffer}'s or {@code Arrays}') took a tenth of an SQL join's
 * task thread.
 *
 * <p>Holds the caller's array: the key must not change while it is gathered. Immutable otherwise.
 */
final class EngineKey {
    private static final VarHandle LONG_LE =
            MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final long MULTIPLIER = 0x9E3779B97F4A7C15L;

    private final ColumnFamilyHandle cf;
    private final byte[] bytes;
    private final int hash;

    private EngineKey(ColumnFamilyHandle cf, byte[] bytes) {
        this.cf = cf;
        this.bytes = bytes;
        this.hash = System.identityHashCode(cf) * 31 + hash(bytes);
    }

    static EngineKey of(ColumnFamilyHandle cf, byte[] key) {
        return new EngineKey(cf, key);
    }

    /** A hash of every byte of {@code key}, mixed eight bytes at a time. */
    static int hash(byte[] key) {
        long h = key.length;
        int i = 0;
        for (; i + Long.BYTES <= key.length; i += Long.BYTES) {
            h = (h ^ (long) LONG_LE.get(key, i)) * MULTIPLIER;
            h ^= h >>> 29;
        }
        long tail = 0;
        for (int shift = 0; i < key.length; i++, shift += Byte.SIZE) {
            tail |= (key[i] & 0xFFL) << shift;
        }
        h = (h ^ tail) * MULTIPLIER;
        h ^= h >>> 32;
        return (int) h;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof EngineKey other
                && hash == other.hash
                && cf == other.cf
                && Arrays.equals(bytes, other.bytes);
    }

    @Override
    public int hashCode() {
        return hash;
    }

    @Override
    public String toString() {
        return "EngineKey[" + bytes.length + " bytes, hash " + Integer.toHexString(hash) + "]";
    }
}
