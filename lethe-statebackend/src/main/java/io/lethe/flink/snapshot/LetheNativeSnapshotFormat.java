package io.lethe.flink.snapshot;

import io.lethe.engine.LetheDb;
import io.lethe.flink.expiry.WindowExpiry;

import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

import java.io.IOException;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;

/**
 * The metadata stream of a Lethe native checkpoint (see {@code docs/flink-backend.md}):
 *
 * <pre>
 * int    magic   0x4C455448 ("LETH")
 * int    version 2
 * KeyedBackendSerializationProxy (key serializer, key-value states, then timer queues; uncompressed)
 * per timer queue, in the proxy's order, per key group of the handle's range in ascending order:
 *   int count, then count elements in the queue's element serializer
 * int    n, then n times: UTF state name, long delete-key floor     (since version 2)
 * boolean window expiry active, long cleanup offset, long window floor   (since version 2)
 * </pre>
 *
 * The floor of a state is the largest delete key it wrote (see {@code StateExpiry}); a restore
 * continues from it so that delete keys stay monotone across restores. Version 1 (no floors, every
 * entry with the maximum delete key) is still read: its states restore with the maximum floor,
 * which keeps their delete keys at the maximum (no horizon expiry for them).
 *
 * The engine files travel beside it in the handle: tables as shared state, manifest and CURRENT
 * as private state. RocksDB and ForSt native checkpoints use the same handle type but start with
 * the proxy's version number, never with the magic, so they are told apart here.
 */
public final class LetheNativeSnapshotFormat {
    static final int MAGIC = 0x4C455448;
    static final int VERSION = 2;
    static final int VERSION_WITHOUT_FLOORS = 1;

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
    public static int readHeader(DataInputView in, String what) throws IOException {
        int magic = in.readInt();
        if (magic != MAGIC) {
            throw new IOException(what + " is not a Lethe native checkpoint (its metadata does not start with"
                    + " Lethe's marker): native checkpoints and savepoints of another state backend (RocksDB,"
                    + " ForSt) cannot be restored by Lethe. Take a canonical savepoint with that backend and"
                    + " restore from it.");
        }
        int version = in.readInt();
        if (version != VERSION && version != VERSION_WITHOUT_FLOORS) {
            throw new IOException(what + " has Lethe checkpoint format version " + version
                    + ", this Lethe reads versions " + VERSION_WITHOUT_FLOORS + " and " + VERSION);
        }
        return version;
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
