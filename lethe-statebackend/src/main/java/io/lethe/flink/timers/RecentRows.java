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
 * hold is a no-op; a row it does not hold is simply written again. Not thread-safe.
 */
final class RecentRows {
    /** Slots per queue: enough for the timers a window operator re-registers between two elements of a key. */
    static final int SLOTS = 1 << 15;

    private final byte[][] slots;
    private final int mask;

    RecentRows(int slots) {
        if (Integer.bitCount(slots) != 1) {
            throw new IllegalArgumentException("slots must be a power of two: " + slots);
        }
        this.slots = new byte[slots][];
        this.mask = slots - 1;
    }

    boolean contains(byte[] row) {
        byte[] held = slots[slot(row)];
        return held != null && Arrays.equals(held, row);
    }

    /** Remembers a row just written; keeps it (the caller must not change it). */
    void add(byte[] row) {
        slots[slot(row)] = row;
    }

    /** Forgets a row that was polled or removed. */
    void forget(byte[] row) {
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
