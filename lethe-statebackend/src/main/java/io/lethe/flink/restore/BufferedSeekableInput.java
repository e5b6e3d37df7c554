package io.lethe.flink.restore;

import org.apache.flink.core.fs.FSDataInputStream;

import java.io.IOException;
import java.util.Objects;

/**
 * A seekable stream that reads another one through a buffer. Flink reads a canonical snapshot a
 * field at a time (a length of four single-byte reads, then the bytes), and the local file system's
 * stream sends each read to the kernel: about ten system calls per entry, which made a restore of
 * 50 million entries take minutes in system calls alone. Through a buffer, one call reads many
 * entries.
 *
 * <p>A seek inside the buffered bytes moves within them (a snapshot's reader seeks to each key
 * group's offset, mostly where it already is); any other seek empties the buffer. A read larger than
 * the buffer goes straight to the stream when the buffer is empty.
 *
 * <p>Invariant: the position is {@code bufferStart + pos}, and {@code buffer[pos, limit)} holds the
 * stream's bytes from there on. Not thread-safe, like the stream it reads.
 */
final class BufferedSeekableInput extends FSDataInputStream {
    /** A restore's buffer: hundreds of a snapshot's typical entries per system call, within the L2 cache. */
    static final int RESTORE_BUFFER_BYTES = 64 * 1024;

    private final FSDataInputStream in;
    private final byte[] buffer;
    private long bufferStart;
    private int pos;
    private int limit;

    /** @param bufferBytes at least 1 */
    BufferedSeekableInput(FSDataInputStream in, int bufferBytes) throws IOException {
        if (bufferBytes < 1) {
            throw new IllegalArgumentException("buffer bytes must be at least 1, not " + bufferBytes);
        }
        this.in = in;
        this.buffer = new byte[bufferBytes];
        this.bufferStart = in.getPos();
    }

    @Override
    public int read() throws IOException {
        if (pos == limit && !fill()) {
            return -1;
        }
        return buffer[pos++] & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        Objects.checkFromIndexSize(off, len, b.length);
        if (len == 0) {
            return 0;
        }
        if (pos == limit) {
            if (len >= buffer.length) {
                return readDirect(b, off, len);
            }
            if (!fill()) {
                return -1;
            }
        }
        int n = Math.min(limit - pos, len);
        System.arraycopy(buffer, pos, b, off, n);
        pos += n;
        return n;
    }

    @Override
    public void seek(long desired) throws IOException {
        if (desired >= bufferStart && desired <= bufferStart + limit) {
            pos = (int) (desired - bufferStart);
            return;
        }
        in.seek(desired);
        bufferStart = desired;
        pos = 0;
        limit = 0;
    }

    @Override
    public long getPos() {
        return bufferStart + pos;
    }

    @Override
    public long skip(long n) throws IOException {
        if (n <= 0) {
            return 0;
        }
        long fromBuffer = Math.min(n, limit - pos);
        pos += (int) fromBuffer;
        if (fromBuffer == n) {
            return n;
        }
        empty();
        long skipped = in.skip(n - fromBuffer);
        bufferStart += skipped;
        return fromBuffer + skipped;
    }

    @Override
    public int available() throws IOException {
        return (int) Math.min(Integer.MAX_VALUE, (long) (limit - pos) + in.available());
    }

    @Override
    public void close() throws IOException {
        in.close();
    }

    /** Refills the empty buffer; false at the end of the stream. */
    private boolean fill() throws IOException {
        empty();
        int n = in.read(buffer, 0, buffer.length);
        if (n <= 0) {
            return false;
        }
        limit = n;
        return true;
    }

    private int readDirect(byte[] b, int off, int len) throws IOException {
        empty();
        int n = in.read(b, off, len);
        if (n > 0) {
            bufferStart += n;
        }
        return n;
    }

    /** Moves the buffer's start to the position, with nothing buffered. */
    private void empty() {
        bufferStart += pos;
        pos = 0;
        limit = 0;
    }
}
