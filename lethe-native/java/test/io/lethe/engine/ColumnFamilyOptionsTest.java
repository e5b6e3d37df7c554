package io.lethe.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class ColumnFamilyOptionsTest {
    /** Every setting away from its default, so a field toBuilder forgot shows in the encoding. */
    private static ColumnFamilyOptions everySettingChanged() {
        return ColumnFamilyOptions.builder()
                .sizeRatio(7)
                .pageSizeBytes(8192)
                .pagesPerTile(3)
                .bloomBitsPerKey(12)
                .targetFileSizeBytes(16L << 20)
                .dynamicLevelBytes(true)
                .level1Bytes(64L << 20)
                .level0CompactionTrigger(6)
                .level0StopWritesTrigger(30)
                .deletePersistenceThreshold(Duration.ofSeconds(5))
                .fadeFilePick(ColumnFamilyOptions.FadeFilePick.OLDEST_DELETE)
                .compression(Compression.ZSTD)
                .bottommostCompression(Compression.NONE)
                .flushCompression(Compression.LZ4)
                .compactionStyle(CompactionStyle.TIME_ORDERED)
                .timeOrderedMaxFiles(64)
                .build();
    }

    @Test
    void toBuilderKeepsEverySetting() {
        ColumnFamilyOptions changed = everySettingChanged();
        long[] defaults = ColumnFamilyOptions.DEFAULT.encode();
        long[] encoded = changed.encode();
        for (int i = 0; i < ColumnFamilyOptions.ENCODED_LONGS; i++) {
            assertNotEquals(defaults[i], encoded[i], "setting " + i + " of the test options is a default");
        }
        assertArrayEquals(encoded, changed.toBuilder().build().encode());
    }

    @Test
    void toBuilderChangesOnlyWhatIsSet() {
        ColumnFamilyOptions changed = everySettingChanged();
        ColumnFamilyOptions derived = changed.toBuilder().pagesPerTile(8).build();
        assertEquals(8, derived.pagesPerTile());
        long[] expected = changed.encode();
        expected[2] = 8;  // pagesPerTile's place in the encoding
        assertArrayEquals(expected, derived.encode());
        assertEquals(3, changed.pagesPerTile());
    }
}
