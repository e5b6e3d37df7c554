package io.lethe.engine;

import java.util.Arrays;
import java.util.Objects;

/**
 * A batch of keys for {@link LetheDb#multiGet}, and the results of the last lookup. Keys are packed
 * into one array and values are returned in one array, so a batch crosses into the engine once,
 * and {@link #clear()} keeps every buffer for the next batch. Not thread-safe: one batch per
 * thread.
 */
public final class MultiGetBatch {
    private byte[] keys;
    private int[] keyEnds;
    private int size;
    private byte[] values;
    private int[] valueStarts;
    private int[] valueLengths;
    private long[] deleteKeys;
    private boolean looked;

    public MultiGetBatch() {
        this(16);
    }

    /** A batch with room for about {@code capacity} keys before it grows. */
    public MultiGetBatch(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be positive, got " + capacity);
        }
        keys = new byte[capacity * 16];
        keyEnds = new int[capacity];
        values = new byte[capacity * 64];
        valueStarts = new int[capacity];
        valueLengths = new int[capacity];
        deleteKeys = new long[capacity];
    }

    /** Empties the batch, keeping its buffers. */
    public MultiGetBatch clear() {
        size = 0;
        looked = false;
        return this;
    }

    public MultiGetBatch add(byte[] key) {
        Objects.requireNonNull(key, "key");
        return add(key, 0, key.length);
    }

    public MultiGetBatch add(byte[] key, int offset, int length) {
        Objects.checkFromIndexSize(offset, length, key.length);
        if (length > LetheDb.MAX_KEY_BYTES) {
            throw new IllegalArgumentException("key of " + length + " bytes exceeds " + LetheDb.MAX_KEY_BYTES);
        }
        int start = size == 0 ? 0 : keyEnds[size - 1];
        if ((long) start + length > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("the keys of one batch must stay below 2 GiB");
        }
        if (size == keyEnds.length) {
            int grown = Math.max(4, size * 2);
            keyEnds = Arrays.copyOf(keyEnds, grown);
            valueStarts = Arrays.copyOf(valueStarts, grown);
            valueLengths = Arrays.copyOf(valueLengths, grown);
            deleteKeys = Arrays.copyOf(deleteKeys, grown);
        }
        if (start + length > keys.length) {
            keys = Arrays.copyOf(keys, (int) Math.min(Integer.MAX_VALUE - 8, Math.max(2L * keys.length, start + length)));
        }
        System.arraycopy(key, offset, keys, start, length);
        keyEnds[size++] = start + length;
        looked = false;
        return this;
    }

    public int size() {
        return size;
    }

    /** Whether key i has a value (after {@link LetheDb#multiGet}). */
    public boolean found(int i) {
        return valueLength(i) >= 0;
    }

    /** The length of key i's value, or -1 if it has none. */
    public int valueLength(int i) {
        checkResult(i);
        return valueLengths[i];
    }

    /** A copy of key i's value, or null. */
    public byte[] value(int i) {
        int n = valueLength(i);
        return n < 0 ? null : Arrays.copyOfRange(values, valueStarts[i], valueStarts[i] + n);
    }

    /** Copies key i's value to dst at offset and returns its length, or -1 (nothing copied). */
    public int copyValue(int i, byte[] dst, int offset) {
        int n = valueLength(i);
        if (n > 0) {
            System.arraycopy(values, valueStarts[i], dst, offset, n);
        }
        return n;
    }

    /** The delete key of key i's value; only meaningful if {@link #found(int)}. */
    public long deleteKey(int i) {
        checkResult(i);
        return deleteKeys[i];
    }

    private void checkResult(int i) {
        Objects.checkIndex(i, size);
        if (!looked) {
            throw new IllegalStateException("the batch has not been looked up since its last change");
        }
    }

    // ---- For LetheDb.

    byte[] keys() {
        return keys;
    }

    int[] keyEnds() {
        return keyEnds;
    }

    byte[] values() {
        return values;
    }

    int[] valueStarts() {
        return valueStarts;
    }

    int[] valueLengths() {
        return valueLengths;
    }

    long[] deleteKeys() {
        return deleteKeys;
    }

    void lookedUp(byte[] valuesNow) {
        values = valuesNow;
        looked = true;
    }
}
