package io.lethe.flink.snapshot;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.zip.CRC32C;

/**
 * The length and CRC32C of a checkpoint file's bytes. A native checkpoint records one per file
 * in its metadata (format version 3, {@link LetheNativeSnapshotFormat}), computed while the file
 * is uploaded; a restore computes it again while it downloads the file, and compares.
 *
 * <p>Why not leave it to the engine: it checks a page's checksum only when it reads the page, and
 * opens a table only at its first read. A damaged checkpoint would restore and fail the job later
 * (or never, if the damaged page is not read again); with this check the restore fails, naming the
 * file. It also catches what the engine cannot tell, such as an intact file of another checkpoint
 * in a file's place.
 *
 * <p>Immutable and thread-safe.
 */
public record FileChecksum(long lengthBytes, int crc32c) {
    /** Large enough that per-read overhead vanishes, small enough to stay in the L2 cache. */
    private static final int BUFFER_BYTES = 64 * 1024;

    /**
     * Copies {@code in} to {@code out} and returns the checksum of the bytes copied. It is
     * computed on the way, so that a file is read once.
     */
    public static FileChecksum copy(InputStream in, OutputStream out) throws IOException {
        CRC32C crc = new CRC32C();
        byte[] buffer = new byte[BUFFER_BYTES];
        long length = 0;
        for (int n; (n = in.read(buffer)) >= 0; ) {
            crc.update(buffer, 0, n);
            out.write(buffer, 0, n);
            length += n;
        }
        return new FileChecksum(length, (int) crc.getValue());
    }

    /**
     * Checks the checksum {@code found} for a file against this one, the recorded one.
     *
     * @param file the file, for the message: its name in the engine directory and its location
     * @throws IOException saying how the file differs: truncated, too long, or a checksum mismatch
     */
    public void check(FileChecksum found, String file) throws IOException {
        if (found.lengthBytes < lengthBytes) {
            throw new IOException(file + ": truncated (" + found.lengthBytes + " of " + lengthBytes
                    + " bytes): the checkpoint is damaged");
        }
        if (found.lengthBytes > lengthBytes) {
            throw new IOException(file + ": " + found.lengthBytes + " bytes where " + lengthBytes
                    + " were written: the checkpoint is damaged");
        }
        if (found.crc32c != crc32c) {
            throw new IOException(String.format(
                    "%s: checksum mismatch (expected CRC32C %08x, found %08x): the checkpoint is damaged", file,
                    crc32c, found.crc32c));
        }
    }

    @Override
    public String toString() {
        return String.format("%d bytes, CRC32C %08x", lengthBytes, crc32c);
    }
}
