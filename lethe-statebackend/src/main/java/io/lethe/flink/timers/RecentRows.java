package io.lethe.flink.timers;

import java.util.Arrays;

/**
 * Rows a queue wrote lately that are still pending: written with a delete key that is still sound
 * (see {@link TimerStore}) and neither polled nor removed since. Writing such a row again would change
 * nothing, so the queue skips it: Flink's window operator registers the same timer for every element
 * of a window, and without this each would be a write.
 *
 * <p>A direct-mapped table: a row takes the slot of its hash, replacing whatever was there, so it
 * costs one hash and one comparison and holds a fixed number of rows. Forgetting a row it does not
 * hold is a no-op; a row it does not hold is simply written again. The slots are allocated on the
 * first write, so a queue that is never written to (an unused processing-time queue) costs nothing.
 * Not thread-safe.
 */
final class RecentRows {
    /**
     * Slots per queue. A window operator's repeated registration is caught when fewer distinct rows
     * than about this were written since the key's previous element; beyond that some are written
     * again, which costs a write and nothing else.
     */
    static final int SLOTS = 1 << 15;

    private final int mask;
    private byte[][] slots;

    RecentRows(int slots) {
        if (Integer.bitCount(slots) != 1) {
            throw new IllegalArgumentException("slots must be a power of two: " + slots);
        }
        this.mask = slots - 1;
    }

    boolean contains(byte[] row) {
        if (slots == null) {
            return false;
        }
        byte[] held = slots[slot(row)];
        return held != null && Arrays.equals(held, row);
    }

    /** Remembers a row just written; keeps it (the caller must not change it). */
    void add(byte[] row) {
        if (slots == null) {
            slots = new byte[mask + 1][];
        }
        slots[slot(row)] = row;
    }

    /** Forgets a row that was polled or removed. */
    void forget(byte[] row) {
        if (slots == null) {
            return;
        }
        int i = slot(row);
        if (slots[i] != null && Arrays.equals(slots[i], row)) {
            slots[i] = null;
        }
    }

    private int slot(byte[] row) {
        int h = Arrays.hashCode(row);
        return (h ^ (h >>> 16)) & mask;
    }
}
