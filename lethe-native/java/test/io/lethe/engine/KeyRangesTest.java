package io.lethe.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;

class KeyRangesTest {
    private static byte[] b(int... v) {
        byte[] r = new byte[v.length];
        for (int i = 0; i < v.length; i++) {
            r[i] = (byte) v[i];
        }
        return r;
    }

    @Test
    void prefixEndIsTheFirstKeyPastThePrefix() {
        assertArrayEquals(b(1, 3), KeyRanges.prefixEnd(b(1, 2)));
        assertArrayEquals(b(2), KeyRanges.prefixEnd(b(1, 0xFF, 0xFF)));
        assertArrayEquals(b(0x80), KeyRanges.prefixEnd(b(0x7F)));
        assertNull(KeyRanges.prefixEnd(b(0xFF, 0xFF)));
        assertNull(KeyRanges.prefixEnd(b()));
    }

    @Test
    void successorAppendsAZeroByte() {
        assertArrayEquals(b(5, 0), KeyRanges.successor(b(5)));
        assertArrayEquals(b(0), KeyRanges.successor(b()));
    }
}
