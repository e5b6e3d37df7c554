package io.lethe.engine;

import io.lethe.engine.internal.Native;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.NoSuchElementException;
import java.util.Objects;

/**
 * Iteration over one column family, in unsigned byte order of keys forwards or backwards, as of a
 * snapshot and within optional bounds. Entries are fetched from the engine many at a time in the
 * direction of travel, so most calls to {@link #next()} and {@link #prev()} do not cross into
 * native code; changing direction seeks again. The batches grow (8 entries, then twice as many each
 * time, up to 4,096), so a scan that stops at a key should set it as the upper bound ({@link
 * ReadOptions#bounded}): without one the last batch reads on past that key, about as many entries
 * again as were read before it.
 *
 * <p>Call order: ({@link #seekToFirst()} | {@link #seek(byte[])} | {@link #seekToLast()} | {@link
 * #seekForPrev(byte[])}) ({@link #isValid()} ({@link #next()} | {@link #prev()})*)*. Not
 * thread-safe. Close it, or close the database, to free it; any use after close throws {@link
 * IllegalStateException}.
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
    private static final int OP_NEXT = 2;
    private static final int OP_LAST = 3;
    private static final int OP_SEEK_FOR_PREV = 4;
    private static final int OP_PREV = 5;

    private static final int FIRST_BUFFER = 16 * 1024;
    /** Buffers up to this size are handed on to the next iterator: larger ones were for rare entries. */
    private static final int MAX_SPARE = 256 * 1024;
    private static final byte[] NONE = new byte[0];
    /**
     * A closed iterator's buffer, for the next iterator its thread opens. State access opens an
     * iterator for a few entries again and again; a new buffer each time would cost more to zero
     * and collect than the entries cost to read.
     */
    private static final ThreadLocal<byte[]> SPARE = new ThreadLocal<>();

    private final LetheDb db;
    private volatile long handle;
    private byte[] buffer = takeSpare();
    private int remaining;  // entries left in the buffer, including the current one
    private int pos;        // offset of the current entry
    private int fill = FIRST_FILL;
    private boolean exhausted;
    private boolean positioned;
    private boolean backward;  // the buffer holds entries in descending order

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

    public void seekToLast() throws LetheException {
        refill(OP_LAST, null, FIRST_FILL);
    }

    /** Positions at the last key <= target (and within the bounds). */
    public void seekForPrev(byte[] target) throws LetheException {
        Objects.requireNonNull(target, "target");
        refill(OP_SEEK_FOR_PREV, target, FIRST_FILL);
    }

    public boolean isValid() {
        ensureOpen();
        return remaining > 0;
    }

    public void next() throws LetheException {
        ensureValid();
        if (backward) {
            turnAround(OP_SEEK);
        } else {
            step(OP_NEXT);
        }
    }

    public void prev() throws LetheException {
        ensureValid();
        if (backward) {
            step(OP_PREV);
        } else {
            turnAround(OP_SEEK_FOR_PREV);
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
        byte[] b = buffer;
        buffer = NONE;
        if (b.length > 0 && b.length <= MAX_SPARE) {
            SPARE.set(b);
        }
    }

    private static byte[] takeSpare() {
        byte[] spare = SPARE.get();
        if (spare == null) {
            return new byte[FIRST_BUFFER];
        }
        SPARE.set(null);
        return spare;
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

    /** Moves to the next buffered entry in the direction of travel, fetching more when none is left. */
    private void step(int op) throws LetheException {
        pos += ENTRY_HEADER + keyLength() + valueLength();
        remaining--;
        if (remaining == 0 && !exhausted) {
            fill = Math.min(MAX_FILL, fill * 2);
            refill(op, null, fill);
        }
    }

    /**
     * Changes direction at the current key. The engine is ahead by the buffered entries, so it seeks
     * to the current key again (it is in the iterator's snapshot) and steps past it.
     */
    private void turnAround(int seekOp) throws LetheException {
        byte[] current = key();
        refill(seekOp, current, FIRST_FILL);
        if (remaining > 0 && compareKeyTo(current) == 0) {
            step(seekOp == OP_SEEK ? OP_NEXT : OP_PREV);
        }
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
                    backward = op >= OP_LAST;
                    if (op != OP_NEXT && op != OP_PREV) {
                        fill = maxEntries;
                    }
                    positioned = true;
                    return;
                }
                // The next entry is larger than the buffer: grow and fetch it again.
                buffer = new byte[Math.max(-r, buffer.length * 2)];
                op = op >= OP_LAST ? OP_PREV : OP_NEXT;
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
