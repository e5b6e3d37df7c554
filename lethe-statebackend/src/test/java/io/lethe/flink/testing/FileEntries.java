package io.lethe.flink.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.lethe.engine.LetheDb;
import io.lethe.engine.Statistics;

/** What an engine's files hold, from its statistics: entries and tombstones over all column families. */
public final class FileEntries {
    private FileEntries() {}

    public static long entries(Statistics st) {
        return st.columnFamilies().stream().flatMap(cf -> cf.levels().stream()).mapToLong(Statistics.Level::entries)
                .sum();
    }

    public static long tombstones(Statistics st) {
        return st.columnFamilies().stream().mapToLong(Statistics.ColumnFamily::tombstones).sum();
    }

    /**
     * Waits until the files hold {@code expected} entries, at most {@code timeoutMs}, fails if they
     * do not by then, and returns the milliseconds it waited.
     */
    public static long awaitEntries(LetheDb db, long expected, long timeoutMs) throws Exception {
        long start = System.nanoTime();
        long deadline = start + timeoutMs * 1_000_000;
        long entries = entries(db.statistics());
        while (entries != expected && System.nanoTime() < deadline) {
            Thread.sleep(10);
            entries = entries(db.statistics());
        }
        assertEquals(expected, entries, "entries in files after " + timeoutMs + " ms");
        return (System.nanoTime() - start) / 1_000_000;
    }
}
