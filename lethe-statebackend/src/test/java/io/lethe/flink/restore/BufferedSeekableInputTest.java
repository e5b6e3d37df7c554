package io.lethe.flink.restore;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.runtime.state.memory.ByteStreamStateHandle;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.util.Arrays;
import java.util.Random;

/**
 * Random reads, seeks and skips on a buffered stream against the same calls answered from the bytes
 * themselves: every byte read and every position must match, at the buffer's edges and the stream's
 * end as well.
 */
class BufferedSeekableInputTest {
    private static final int LENGTH = 5_000;

    @ParameterizedTest(name = "buffer of {0} bytes")
    @ValueSource(ints = {1, 7, 64, 4096})
    void readsSeeksAndSkipsAsTheBytesThemselves(int bufferBytes) throws IOException {
        for (long seed = 1; seed <= 20; seed++) {
            Random random = new Random(seed * 31 + bufferBytes);
            byte[] data = new byte[LENGTH];
            random.nextBytes(data);
            try (FSDataInputStream in = new BufferedSeekableInput(open(data), bufferBytes)) {
                int model = 0;
                for (int step = 0; step < 2_000; step++) {
                    model = step(random, in, data, model, bufferBytes, "seed " + seed + " step " + step);
                    assertEquals(model, in.getPos(), "position, seed " + seed + " step " + step);
                }
            }
        }
    }

    /** One random call on both; returns the model's position after it. */
    private static int step(Random random, FSDataInputStream in, byte[] data, int model, int bufferBytes, String where)
            throws IOException {
        switch (random.nextInt(5)) {
            case 0 -> {
                assertEquals(model < data.length ? data[model] & 0xff : -1, in.read(), where);
                return Math.min(model + 1, data.length);
            }
            case 1, 2 -> {
                int len = random.nextInt(3 * bufferBytes + 2);
                byte[] got = new byte[len + 2];
                int n = in.read(got, 1, len);
                int expected = len == 0 ? 0 : model == data.length ? -1 : Math.min(len, data.length - model);
                if (n > 0 && n < expected) {
                    expected = n; // a short read is allowed, as long as its bytes are right
                }
                assertEquals(expected, n, where);
                if (n > 0) {
                    assertArrayEquals(Arrays.copyOfRange(data, model, model + n), Arrays.copyOfRange(got, 1, 1 + n), where);
                }
                return n > 0 ? model + n : model;
            }
            case 3 -> {
                int target = random.nextInt(4) == 0 ? model + random.nextInt(bufferBytes + 1) - bufferBytes / 2
                        : random.nextInt(data.length + 1);
                target = Math.max(0, Math.min(data.length, target));
                in.seek(target);
                return target;
            }
            default -> {
                int n = random.nextInt(2 * bufferBytes + 2);
                long skipped = in.skip(n);
                assertEquals(Math.min(n, data.length - model), skipped, where);
                return model + (int) skipped;
            }
        }
    }

    @ParameterizedTest(name = "buffer of {0} bytes")
    @ValueSource(ints = {0, -1})
    void refusesABufferOfNoBytes(int bufferBytes) {
        assertThrows(IllegalArgumentException.class, () -> new BufferedSeekableInput(open(new byte[3]), bufferBytes));
    }

    private static FSDataInputStream open(byte[] data) throws IOException {
        return new ByteStreamStateHandle("bytes", data).openInputStream();
    }
}
