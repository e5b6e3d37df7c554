package io.lethe.flink.snapshot;

import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

import java.io.IOException;

/**
 * The metadata stream of a Lethe native checkpoint (see {@code docs/flink-backend.md}):
 *
 * <pre>
 * int    magic   0x4C455448 ("LETH")
 * int    version 1
 * KeyedBackendSerializationProxy (key serializer, key-value states, then timer queues; uncompressed)
 * per timer queue, in the proxy's order, per key group of the handle's range in ascending order:
 *   int count, then count elements in the queue's element serializer
 * </pre>
 *
 * The engine files travel beside it in the handle: tables as shared state, manifest and CURRENT
 * as private state. RocksDB and ForSt native checkpoints use the same handle type but start with
 * the proxy's version number, never with the magic, so they are told apart here.
 */
public final class LetheNativeSnapshotFormat {
    static final int MAGIC = 0x4C455448;
    static final int VERSION = 1;

    private LetheNativeSnapshotFormat() {}

    static void writeHeader(DataOutputView out) throws IOException {
        out.writeInt(MAGIC);
        out.writeInt(VERSION);
    }

    /** Reads and checks the header; a stream of another backend fails with what to do instead. */
    public static void readHeader(DataInputView in, String what) throws IOException {
        int magic = in.readInt();
        if (magic != MAGIC) {
            throw new IOException(what + " is not a Lethe native checkpoint (its metadata does not start with"
                    + " Lethe's marker): native checkpoints and savepoints of another state backend (RocksDB,"
                    + " ForSt) cannot be restored by Lethe. Take a canonical savepoint with that backend and"
                    + " restore from it.");
        }
        int version = in.readInt();
        if (version != VERSION) {
            throw new IOException(what + " has Lethe checkpoint format version " + version
                    + ", this Lethe reads version " + VERSION);
        }
    }
}
