package io.lethe.flink.snapshot;

import io.lethe.engine.LetheDb;
import io.lethe.flink.expiry.WindowExpiry;
import io.lethe.flink.timers.QueueRecord;

import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.core.memory.DataOutputView;

import java.io.IOException;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.zip.CRC32C;

/**
 * The metadata stream of a Lethe native checkpoint (see {@code docs/flink-backend.md}):
 *
 * <pre>
 * int    magic   0x4C455448 ("LETH")
 * int    version 4
 * int    n, then n times: UTF file name, long length in bytes, int CRC32C   (since version 3)
 *          every engine file of the handle, shared and private, as its handle holds it
 * KeyedBackendSerializationProxy (key serializer, key-value states, then timer queues; uncompressed)
 * int    n, then n times: UTF queue name, QueueRecord                   (since version 4)
 *          the timer queues kept in the engine (their rows are in the engine's files)
 * per other (heap) timer queue, in the proxy's order, per key group of the handle's range in
 * ascending order: int count, then count elements in the queue's element serializer
 * int    n, then n times: UTF state name, long delete-key floor     (since version 2)
 * boolean window expiry active, long cleanup offset, long window floor   (since version 2)
 * int    CRC32C of every byte before it, from the magic on           (since version 3)
 * </pre>
 *
 * The floor of a state is the largest delete key it wrote (see {@code StateExpiry}); a restore
 * continues from it so that delete keys stay monotone across restores. Version 1 (no floors, every
 * entry with the maximum delete key) is still read: its states restore with the maximum floor,
 * which keeps their delete keys at the maximum (no horizon expiry for them).
 *
 * <p>The file checksums (version 3) let a restore check every file while it downloads it, before
 * the engine opens on them ({@link FileChecksum}); the trailing CRC32C covers this stream itself,
 * which a restore reads whole and checks before it parses anything (a flipped byte among the
 * timers would otherwise restore a wrong timer, silently). Versions 1 and 2 carry neither: their
 * files restore unchecked.
 *
 * The engine files travel beside it in the handle: tables as shared state, manifest and CURRENT
 * as private state. RocksDB and ForSt native checkpoints use the same handle type but start with
 * the proxy's version number, never with the magic, so they are told apart here.
 */
public final class LetheNativeSnapshotFormat {
    static final int MAGIC = 0x4C455448;
    static final int VERSION = 4;
    static final int VERSION_WITHOUT_ENGINE_TIMERS = 3;
    static final int VERSION_WITHOUT_CHECKSUMS = 2;
    static final int VERSION_WITHOUT_FLOORS = 1;
    private static final int HEADER_BYTES = 8;
    private static final int CHECKSUM_BYTES = 4;

    private LetheNativeSnapshotFormat() {}

    static void writeHeader(DataOutputView out) throws IOException {
        out.writeInt(MAGIC);
        out.writeInt(VERSION);
    }

    /**
     * Reads and checks the header; a stream of another backend fails with what to do instead.
     *
     * @return the format version
     */
    private static int readHeader(DataInputView in, String what) throws IOException {
        int magic = in.readInt();
        if (magic != MAGIC) {
            throw new IOException(what + " is not a Lethe native checkpoint (its metadata does not start with"
                    + " Lethe's marker): native checkpoints and savepoints of another state backend (RocksDB,"
                    + " ForSt) cannot be restored by Lethe. Take a canonical savepoint with that backend and"
                    + " restore from it.");
        }
        int version = in.readInt();
        if (version < VERSION_WITHOUT_FLOORS || version > VERSION) {
            throw new IOException(what + " has Lethe checkpoint format version " + version
                    + ", this Lethe reads versions " + VERSION_WITHOUT_FLOORS + " to " + VERSION);
        }
        return version;
    }

    /** A whole metadata stream, checked: its format version, and its contents after the header. */
    public record Checked(int version, DataInputView in) {}

    /**
     * Checks a whole metadata stream: the header, and since version 3 the trailing CRC32C.
     *
     * @param what names the stream in errors: the checkpoint and the stream's location
     * @return the version and the contents between the header and the trailing CRC32C
     */
    public static Checked check(byte[] metadata, String what) throws IOException {
        if (metadata.length < HEADER_BYTES) {
            throw new IOException(what + ": truncated (" + metadata.length + " bytes, shorter than the header):"
                    + " the checkpoint is damaged");
        }
        int version = readHeader(new DataInputDeserializer(metadata, 0, HEADER_BYTES), what);
        if (version <= VERSION_WITHOUT_CHECKSUMS) {
            return new Checked(version,
                    new DataInputDeserializer(metadata, HEADER_BYTES, metadata.length - HEADER_BYTES));
        }
        int body = metadata.length - CHECKSUM_BYTES;
        if (body < HEADER_BYTES) {
            throw new IOException(what + ": truncated (" + metadata.length + " bytes): the checkpoint is damaged");
        }
        int expected = new DataInputDeserializer(metadata, body, CHECKSUM_BYTES).readInt();
        int found = crc32c(metadata, body);
        if (found != expected) {
            throw new IOException(String.format(
                    "%s: checksum mismatch (expected CRC32C %08x, found %08x): the checkpoint is damaged", what,
                    expected, found));
        }
        return new Checked(version, new DataInputDeserializer(metadata, HEADER_BYTES, body - HEADER_BYTES));
    }

    /** Appends the CRC32C of everything written so far: the last field of the stream. */
    static void writeChecksum(DataOutputSerializer out) throws IOException {
        out.writeInt(crc32c(out.getSharedBuffer(), out.length()));
    }

    private static int crc32c(byte[] bytes, int length) {
        CRC32C crc = new CRC32C();
        crc.update(bytes, 0, length);
        return (int) crc.getValue();
    }

    static void writeFiles(DataOutputView out, Map<String, FileChecksum> files) throws IOException {
        out.writeInt(files.size());
        for (Map.Entry<String, FileChecksum> e : files.entrySet()) {
            out.writeUTF(e.getKey());
            out.writeLong(e.getValue().lengthBytes());
            out.writeInt(e.getValue().crc32c());
        }
    }

    /** The recorded checksums by file name; null before version 3 (nothing was recorded). */
    public static Map<String, FileChecksum> readFiles(DataInputView in, int version) throws IOException {
        if (version <= VERSION_WITHOUT_CHECKSUMS) {
            return null;
        }
        int n = in.readInt();
        if (n < 0) {
            throw new IOException("Corrupt Lethe checkpoint metadata: " + n + " files");
        }
        Map<String, FileChecksum> files = new HashMap<>();
        for (int i = 0; i < n; i++) {
            files.put(in.readUTF(), new FileChecksum(in.readLong(), in.readInt()));
        }
        return files;
    }

    static void writeEngineQueues(DataOutputView out, Map<String, QueueRecord> queues) throws IOException {
        out.writeInt(queues.size());
        for (Map.Entry<String, QueueRecord> e : queues.entrySet()) {
            out.writeUTF(e.getKey());
            e.getValue().writeTo(out);
        }
    }

    /** The timer queues kept in the engine, by name, with their records; none before version 4. */
    public static Map<String, QueueRecord> readEngineQueues(DataInputView in, int version) throws IOException {
        Map<String, QueueRecord> queues = new LinkedHashMap<>();
        if (version <= VERSION_WITHOUT_ENGINE_TIMERS) {
            return queues;
        }
        int n = in.readInt();
        if (n < 0) {
            throw new IOException("Corrupt Lethe checkpoint metadata: " + n + " engine timer queues");
        }
        for (int i = 0; i < n; i++) {
            queues.put(in.readUTF(), QueueRecord.readFrom(in));
        }
        return queues;
    }

    static void writeWindow(DataOutputView out, WindowExpiry.Record r) throws IOException {
        out.writeBoolean(r.active());
        out.writeLong(r.cleanupOffset());
        out.writeLong(r.windowFloor());
    }

    /** The window expiry record; null for version 1. */
    public static WindowExpiry.Record readWindow(DataInputView in, int version) throws IOException {
        if (version == VERSION_WITHOUT_FLOORS) {
            return null;
        }
        return new WindowExpiry.Record(in.readBoolean(), in.readLong(), in.readLong());
    }

    static void writeFloors(DataOutputView out, Map<String, Long> floors) throws IOException {
        out.writeInt(floors.size());
        for (Map.Entry<String, Long> e : floors.entrySet()) {
            out.writeUTF(e.getKey());
            out.writeLong(e.getValue());
        }
    }

    /** The delete-key floors by state name; for version 1, the maximum for every state in {@code states}. */
    public static Map<String, Long> readFloors(DataInputView in, int version, Collection<String> states)
            throws IOException {
        Map<String, Long> floors = new HashMap<>();
        if (version == VERSION_WITHOUT_FLOORS) {
            for (String s : states) {
                floors.put(s, LetheDb.MAX_DELETE_KEY);
            }
            return floors;
        }
        int n = in.readInt();
        if (n < 0) {
            throw new IOException("Corrupt Lethe checkpoint metadata: " + n + " delete-key floors");
        }
        for (int i = 0; i < n; i++) {
            floors.put(in.readUTF(), in.readLong());
        }
        return floors;
    }
}
