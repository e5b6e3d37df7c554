package io.lethe.engine;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Objects;

/**
 * A group of updates applied atomically, possibly across column families. The batch is encoded
 * in Java in the engine's public batch format (docs/formats.md, "Write batch") and handed to the
 * engine in one call; it holds no native resources.
 *
 * <p>Not thread-safe. Column family handles are checked when the batch is written: they must
 * belong to the database that writes the batch.
 */
public final class WriteBatch {
    static final int HEADER_SIZE = 12;
    static final byte KIND_DELETE = 0;
    static final byte KIND_PUT = 1;
    static final byte KIND_MERGE = 2;
    static final byte KIND_DELETE_RANGE = 3;
    static final byte KIND_DELETE_WITH_KEY = 4;

    private static final VarHandle LONG_LE =
            MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle INT_LE =
            MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);

    private byte[] buf;
    private int size;
    private int count;
    /** The database whose handles this batch references (null while empty). */
    private LetheDb owner;

    public WriteBatch() {
        this(256);
    }

    public WriteBatch(int initialCapacity) {
        buf = new byte[Math.max(HEADER_SIZE, initialCapacity)];
        size = HEADER_SIZE;
    }

    public WriteBatch put(ColumnFamilyHandle cf, byte[] key, byte[] value) {
        return put(cf, key, value, LetheDb.MAX_DELETE_KEY);
    }

    public WriteBatch put(ColumnFamilyHandle cf, byte[] key, byte[] value, long deleteKey) {
        LetheDb.checkKey(key);
        LetheDb.checkValue(value);
        record(KIND_PUT, cf);
        putBytes(key);
        putBytes(value);
        putLong(deleteKey);
        return this;
    }

    public WriteBatch merge(ColumnFamilyHandle cf, byte[] key, byte[] operand, long deleteKey) {
        LetheDb.checkKey(key);
        LetheDb.checkValue(operand);
        record(KIND_MERGE, cf);
        putBytes(key);
        putBytes(operand);
        putLong(deleteKey);
        return this;
    }

    public WriteBatch delete(ColumnFamilyHandle cf, byte[] key) {
        return delete(cf, key, LetheDb.MAX_DELETE_KEY);
    }

    /**
     * A point delete with a delete key: a horizon or delete-key range covering it removes the
     * tombstone itself, as it removes what the tombstone deletes. It must be at least the delete key
     * of every version of the key it deletes ({@link LetheDb}).
     */
    public WriteBatch delete(ColumnFamilyHandle cf, byte[] key, long deleteKey) {
        LetheDb.checkKey(key);
        if (deleteKey == LetheDb.MAX_DELETE_KEY) {
            record(KIND_DELETE, cf);
            putBytes(key);
        } else {
            record(KIND_DELETE_WITH_KEY, cf);
            putBytes(key);
            putLong(deleteKey);
        }
        return this;
    }

    /** Deletes every key k with begin <= k < end (unsigned byte order). */
    public WriteBatch deleteRange(ColumnFamilyHandle cf, byte[] begin, byte[] end) {
        LetheDb.checkKey(begin);
        LetheDb.checkKey(end);
        if (Arrays.compareUnsigned(begin, end) >= 0) {
            throw new IllegalArgumentException("deleteRange: begin must be less than end");
        }
        record(KIND_DELETE_RANGE, cf);
        putBytes(begin);
        putBytes(end);
        return this;
    }

    public int count() {
        return count;
    }

    public int sizeInBytes() {
        return size;
    }

    public void clear() {
        size = HEADER_SIZE;
        count = 0;
        owner = null;
    }

    LetheDb owner() {
        return owner;
    }

    /** The encoded batch; valid up to {@link #sizeInBytes()} and until the next change. */
    byte[] data() {
        INT_LE.set(buf, 8, count);
        return buf;
    }

    private void record(byte kind, ColumnFamilyHandle cf) {
        Objects.requireNonNull(cf, "column family");
        LetheDb db = cf.owner();
        if (owner == null) {
            owner = db;
        } else if (owner != db) {
            throw new IllegalArgumentException("a write batch cannot span two databases");
        }
        ensure(1 + 5);
        buf[size++] = kind;
        putVarint(cf.id());
        count++;
    }

    private void putBytes(byte[] b) {
        ensure(5 + b.length);
        putVarint(b.length);
        System.arraycopy(b, 0, buf, size, b.length);
        size += b.length;
    }

    private void putLong(long v) {
        ensure(8);
        LONG_LE.set(buf, size, v);
        size += 8;
    }

    private void putVarint(int v) {
        while ((v & ~0x7F) != 0) {
            buf[size++] = (byte) ((v & 0x7F) | 0x80);
            v >>>= 7;
        }
        buf[size++] = (byte) v;
    }

    private void ensure(int extra) {
        long need = (long) size + extra;
        if (need > Integer.MAX_VALUE - 16) {
            throw new IllegalArgumentException("write batch larger than 2 GiB");
        }
        if (need > buf.length) {
            buf = Arrays.copyOf(buf, (int) Math.min(Integer.MAX_VALUE - 16, Math.max(need, 2L * buf.length)));
        }
    }
}
