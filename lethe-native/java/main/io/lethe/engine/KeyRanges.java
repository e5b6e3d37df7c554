package io.lethe.engine;

import java.util.Arrays;

/** Bounds of key ranges in the engine's order (unsigned bytes), for iterator bounds and seeks. */
public final class KeyRanges {
    private KeyRanges() {}

    /** The smallest key greater than every key that starts with prefix, or null if there is none. */
    public static byte[] prefixEnd(byte[] prefix) {
        for (int i = prefix.length - 1; i >= 0; i--) {
            if (prefix[i] != (byte) 0xFF) {
                byte[] end = Arrays.copyOf(prefix, i + 1);
                end[i]++;
                return end;
            }
        }
        return null;
    }

    /** The smallest key greater than key: key followed by a zero byte. */
    public static byte[] successor(byte[] key) {
        return Arrays.copyOf(key, key.length + 1);
    }
}
