package io.lethe.flink.snapshot;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import java.util.zip.CRC32C;

/** Checksums computed while copying, and the errors that say how a file differs from its record. */
class FileChecksumTest {
    @Test
    void copyComputesTheCrc32cOfTheBytesItCopiesReadingThemOnce() throws IOException {
        byte[] data = new byte[200_000];  // several buffers
        new Random(7).nextBytes(data);
        long[] read = new long[1];
        InputStream counting = new FilterInputStream(new ByteArrayInputStream(data)) {
            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                int n = super.read(b, off, len);
                read[0] += Math.max(n, 0);
                return n;
            }
        };
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        FileChecksum checksum = FileChecksum.copy(counting, out);
        assertArrayEquals(data, out.toByteArray());
        assertEquals(data.length, read[0], "every byte read exactly once");
        assertEquals(data.length, checksum.lengthBytes());
        CRC32C crc = new CRC32C();
        crc.update(data);
        assertEquals((int) crc.getValue(), checksum.crc32c());

        // The standard check value of CRC32C (RFC 3720): the polynomial is Castagnoli's.
        FileChecksum known = FileChecksum.copy(
                new ByteArrayInputStream("123456789".getBytes(StandardCharsets.US_ASCII)), new ByteArrayOutputStream());
        assertEquals(0xE3069283, known.crc32c());
    }

    @Test
    void checkSaysHowTheFileDiffers() throws IOException {
        FileChecksum recorded = new FileChecksum(100, 0x12345678);
        recorded.check(new FileChecksum(100, 0x12345678), "f");

        String truncated = assertThrows(IOException.class,
                () -> recorded.check(new FileChecksum(40, 0x12345678), "Checkpoint 3 file 000007.sst (x)")).getMessage();
        assertEquals("Checkpoint 3 file 000007.sst (x): truncated (40 of 100 bytes): the checkpoint is damaged",
                truncated);
        String longer = assertThrows(IOException.class,
                () -> recorded.check(new FileChecksum(120, 0x12345678), "f")).getMessage();
        assertTrue(longer.contains("120 bytes where 100 were written"), longer);
        String mismatch = assertThrows(IOException.class,
                () -> recorded.check(new FileChecksum(100, 0x0badf00d), "f")).getMessage();
        assertEquals("f: checksum mismatch (expected CRC32C 12345678, found 0badf00d): the checkpoint is damaged",
                mismatch);
    }
}
