package io.lethe.bench;

import java.util.List;

/** An engine under the delete-heavy YCSB workload (Lethe or one of RocksDB's variants). */
interface YcsbEngine extends AutoCloseable {
    /**
     * One table file that held tombstones: how many, and their age in microseconds as a verdict may
     * count it against the engine. {@code ageMicros}: Lethe, the exact age of the file's oldest
     * tombstone; RocksDB, the age of the file's newest entry, so every tombstone in it is at least this
     * old. {@code ageUpperMicros}: no tombstone in the file is older (Lethe: the same; RocksDB: its
     * oldest entry's age).
     */
    record FileTombstones(long ageMicros, long ageUpperMicros, long count) {}

    /**
     * One look at an engine: live table bytes, bytes written by flushes and compactions, compactions that
     * rewrote data (trivial moves not counted), tombstones (files and memtables), the oldest one's age as
     * {@link FileTombstones#ageMicros} counts it, and the files holding tombstones.
     */
    record Measure(long liveBytes, long writtenBytes, long compactions, long compactionBytes, long tombstones,
            double maxTombstoneAgeSeconds, List<FileTombstones> files) {}

    void put(byte[] k, byte[] v) throws Exception;

    byte[] get(byte[] k) throws Exception;

    void delete(byte[] k) throws Exception;

    /** Measures now; {@code clock} knows when every write happened. */
    Measure measure(WriteClock clock) throws Exception;

    /** Writes the memtables to files and waits until no background work runs or is pending. */
    void flush() throws Exception;

    @Override
    void close();
}
