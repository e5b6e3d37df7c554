package io.lethe.bench;

/**
 * The operations the engine benchmark measures, implemented once for Lethe and once for RocksDB
 * so that both run the same code path in the same JVM.
 */
interface KeyValueStore extends AutoCloseable {
    void put(byte[] key, byte[] value) throws Exception;

    byte[] get(byte[] key) throws Exception;

    void delete(byte[] key) throws Exception;

    /** Deletes every key in [begin, end). */
    void deleteRange(byte[] begin, byte[] end) throws Exception;

    /** Writes the memtable to a file and returns when it is there, without compacting. */
    void flushMemtable() throws Exception;

    /** Looks up all keys in one batch, as the engine's batched lookup does; returns the value bytes found. */
    long multiGet(byte[][] keys) throws Exception;

    /** Seeks to key and reads up to n entries; returns the bytes read (keys and values). */
    long seekAndNext(byte[] key, int n) throws Exception;

    /**
     * Reads every entry of [from, to) through an iterator bounded above by {@code to}, as each engine
     * is meant to scan a range (Lethe's {@code ReadOptions} upper bound, RocksDB's {@code
     * iterate_upper_bound}) and as Lethe's state backends read; returns the bytes read (keys and
     * values).
     */
    long scanRange(byte[] from, byte[] to) throws Exception;

    /**
     * Flushes the memtable and compacts everything, returning when no background work is left: both
     * engines are measured on a settled tree, whatever their compaction would have been doing.
     */
    void settle() throws Exception;

    /**
     * Returns when no flush or compaction runs or is pending, without flushing the memtable: the
     * tree as a load leaves it, with its latest writes still in memory.
     */
    void quiesce() throws Exception;
}
