package io.lethe.flink.expiry;

/** Timestamps as Flink's serializers write them: 8 bytes, big-endian. */
final class Timestamps {
    private Timestamps() {}

    /** The timestamp at {@code offset} of {@code b}. */
    static long read(byte[] b, int offset) {
        if (b.length < offset + Long.BYTES) {
            throw new IllegalArgumentException("A value of " + b.length + " bytes has no timestamp at offset "
                    + offset);
        }
        long v = 0;
        for (int i = 0; i < Long.BYTES; i++) {
            v = (v << 8) | (b[offset + i] & 0xFF);
        }
        return v;
    }
}
