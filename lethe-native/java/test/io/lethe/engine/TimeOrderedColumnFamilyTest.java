package io.lethe.engine;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A column family created time-ordered through the Java API: window-like files stay in level 0 and leave by
 * the horizon, unmerged, also after a reopen (the style is kept with the family); a leveled one moves the
 * same files down.
 */
class TimeOrderedColumnFamilyTest {
    @TempDir Path dir;

    private static final int KEYS = 200;

    private static Statistics.ColumnFamily run(Path path, CompactionStyle style) throws Exception {
        ColumnFamilyOptions cf = ColumnFamilyOptions.builder().compactionStyle(style).compression(Compression.NONE)
                .pageSizeBytes(1024).level1Bytes(8 << 10).targetFileSizeBytes(16 << 10).sizeRatio(4)
                .level0CompactionTrigger(2).build();
        DbOptions options = DbOptions.builder().writeBufferSizeBytes(1 << 20).build();
        try (LetheDb db = LetheDb.open(path.toString(), options)) {
            ColumnFamilyHandle windows = db.createColumnFamily("windows", cf);
            for (int w = 0; w < 12; w++) {
                for (int i = 0; i < KEYS; i++) {
                    db.put(windows, key(i, w), value(i, w), w);
                }
                db.flush();
                if (w >= 3) {
                    db.advanceHorizon(windows, w - 2);
                }
                db.waitForBackgroundWork();
            }
        }
        // Reopened without naming the style: the family keeps it.
        try (LetheDb db = LetheDb.open(path.toString(), options)) {
            ColumnFamilyHandle windows = db.columnFamily("windows");
            assertEquals(new String(value(7, 11), UTF_8), new String(db.get(windows, key(7, 11)), UTF_8));
            assertNull(db.get(windows, key(7, 8)));
            db.put(windows, key(1, 12), value(1, 12), 12);
            db.flush();
            db.waitForBackgroundWork();
            return db.statistics().columnFamilies().stream().filter(c -> c.name().equals("windows")).findFirst()
                    .orElseThrow();
        }
    }

    @Test
    void filesStayInLevelZeroAndLeaveByTheHorizon() throws Exception {
        Statistics.ColumnFamily timeOrdered = run(dir.resolve("time-ordered"), CompactionStyle.TIME_ORDERED);
        assertEquals(1, timeOrdered.levels().size(), "every file in level 0: " + timeOrdered.levels());
        assertTrue(timeOrdered.levels().get(0).files() <= 4, "windows 9-11 and 12: " + timeOrdered.levels());
        Statistics.ColumnFamily leveled = run(dir.resolve("leveled"), CompactionStyle.LEVELED);
        assertTrue(leveled.levels().size() > 1, "leveled compaction moves files down: " + leveled.levels());
    }

    private static byte[] key(int i, int window) {
        return String.format("key%04d@%03d", i, window).getBytes(UTF_8);
    }

    private static byte[] value(int i, int window) {
        return (i + "/" + window + "/" + "x".repeat(100)).getBytes(UTF_8);
    }
}
