package io.lethe.engine;

import io.lethe.engine.internal.Native;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.NoSuchElementException;
import java.util.Objects;

/**
 * Forward iteration over one column family, in unsigned byte order of keys, as of a snapshot and
 * within optional bounds. Entries are fetched from the engine many at a time, so most calls to
 * {@link #next()} do not cross into native code.
 *
 * <p>Call order: ({@link #seekToFirst()} | {@link #seek(byte[])}) ({@link #isValid()} {@link
 * #next()}*)*. Not thread-safe. Close it, or close the database, to free it; any use after close
 * throws {@link IllegalStateException}.
 */
public final class LetheIterator implements AutoCloseable {
    private static final VarHandle INT_LE =
            MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle LONG_LE =
            MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final int ENTRY_HEADER = 16;
    private static final int FIRST_FILL = 8;
    private static final int MAX_FILL = 4096;

    private static final int OP_FIRST = 0;
    private static final int OP_SEEK = 1;
    private static final int OP_CONTINUE = 2;

    private final LetheDb db;
    private volatile long handle;
    private byte[] buffer = new byte[16 * 1024];
    private int remaining;  // entries left in the buffer, including the current one
    private int pos;        // offset of the current entry
    private int fill = FIRST_FILL;
    private boolean exhausted;
    private boolean positioned;

    LetheIterator(LetheDb db, long handle) {
        this.db = db;
        this.handle = handle;
    }

    public void seekToFirst() throws LetheException {
        refill(OP_FIRST, null, FIRST_FILL);
    }

    /** Positions at the first key >= target (and within the bounds). */
    public void seek(byte[] target) throws LetheException {
        Objects.requireNonNull(target, "target");
        refill(OP_SEEK, target, FIRST_FILL);
    }

    public boolean isValid() {
        ensureOpen();
        return remaining > 0;
    }

    public void next() throws LetheException {
        ensureValid();
        pos += ENTRY_HEADER + keyLength() + valueLength();
        remaining--;
        if (remaining == 0 && !exhausted) {
            fill = Math.min(MAX_FILL, fill * 2);
            refill(OP_CONTINUE, null, fill);
        }
    }

    /** A copy of the current key. */
    public byte[] key() {
        ensureValid();
        return Arrays.copyOfRange(buffer, pos + ENTRY_HEADER, pos + ENTRY_HEADER + keyLength());
    }

    /** A copy of the current value. */
    public byte[] value() {
        ensureValid();
        int start = pos + ENTRY_HEADER + keyLength();
        return Arrays.copyOfRange(buffer, start, start + valueLength());
    }

    public long deleteKey() {
        ensureValid();
        return (long) LONG_LE.get(buffer, pos + 8);
    }

    /** Compares the current key with other in unsigned byte order, without copying. */
    public int compareKeyTo(byte[] other) {
        ensureValid();
        int start = pos + ENTRY_HEADER;
        return Arrays.compareUnsigned(buffer, start, start + keyLength(), other, 0, other.length);
    }

    /** Whether the current key starts with prefix, without copying. */
    public boolean keyStartsWith(byte[] prefix) {
        ensureValid();
        int len = keyLength();
        int start = pos + ENTRY_HEADER;
        return len >= prefix.length
                && Arrays.equals(buffer, start, start + prefix.length, prefix, 0, prefix.length);
    }

    @Override
    public void close() {
        db.closeIterator(this);
        remaining = 0;
    }

    long takeHandle() {
        long h = handle;
        handle = 0;
        return h;
    }

    private int keyLength() {
        return (int) INT_LE.get(buffer, pos);
    }

    private int valueLength() {
        return (int) INT_LE.get(buffer, pos + 4);
    }

    private void refill(int op, byte[] target, int maxEntries) throws LetheException {
        db.guard().acquire();
        try {
            long h = handle;
            if (h == 0) {
                throw new IllegalStateException("iterator is closed");
            }
            while (true) {
                int r = Native.iteratorFill(h, op, target, buffer, maxEntries);
                if (r >= 0) {
                    remaining = r >>> 1;
                    pos = 0;
                    exhausted = (r & 1) != 0;
                    if (op != OP_CONTINUE) {
                        fill = maxEntries;
                    }
                    positioned = true;
                    return;
                }
                // The next entry is larger than the buffer: grow and fetch it again.
                buffer = new byte[Math.max(-r, buffer.length * 2)];
                op = OP_CONTINUE;
                target = null;
            }
        } finally {
            db.guard().release();
        }
    }

    private void ensureOpen() {
        if (handle == 0) {
            throw new IllegalStateException("iterator is closed");
        }
    }

    private void ensureValid() {
        ensureOpen();
        if (!positioned || remaining == 0) {
            throw new NoSuchElementException("iterator is not positioned at an entry");
        }
    }
}
