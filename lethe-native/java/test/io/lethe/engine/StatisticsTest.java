package io.lethe.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The statistics transfer: decoded by name, and refused whole when its shape is not this build's. */
class StatisticsTest {
    /** A transfer of one family with one level, tickers numbered 100 + ordinal. */
    private static List<Long> transfer() {
        List<Long> r = new ArrayList<>(List.of(Statistics.TRANSFER_VERSION, (long) Ticker.values().length));
        for (Ticker t : Ticker.values()) {
            r.add(100L + t.ordinal());
        }
        r.addAll(List.of(1L, 7L, 11L, 12L, 13L, 14L, Double.doubleToLongBits(1.5), 16L, 17L, 18L, 1L));
        for (int f = 0; f < Statistics.LEVEL_FIELDS; f++) {
            r.add(20L + f);
        }
        return r;
    }

    private static Statistics decode(List<Long> r) {
        return Statistics.decode(r.stream().mapToLong(Long::longValue).toArray(), id -> "family-" + id);
    }

    @Test
    void decodesTickersFamiliesAndLevels() {
        Statistics st = decode(transfer());
        for (Ticker t : Ticker.values()) {
            assertEquals(100L + t.ordinal(), st.get(t), t.metricName());
        }
        Statistics.ColumnFamily cf = st.columnFamilies().get(0);
        assertEquals("family-7", cf.name());
        assertEquals(1.5, cf.spaceAmplificationEstimate());
        assertEquals(18, cf.pagesPerTile());
        Statistics.Level level = cf.levels().get(0);
        assertEquals(20, level.files());
        assertEquals(26, level.estimatedInvalidated());
        assertEquals(List.of(27L, 28L, 29L, 30L, 31L), level.tombstoneAgeHistogram());
    }

    @Test
    void refusesAnotherVersionTickerCountOrLength() {
        List<Long> version = transfer();
        version.set(0, Statistics.TRANSFER_VERSION + 1);
        List<Long> tickers = transfer();
        tickers.set(1, (long) Ticker.values().length - 1);
        List<Long> shorter = transfer();
        shorter.remove(shorter.size() - 1);
        List<Long> longer = transfer();
        longer.add(0L);
        List<Long> levels = transfer();
        levels.set(2 + Ticker.values().length + 1 + Statistics.COLUMN_FAMILY_FIELDS, 1L << 40);
        for (List<Long> bad : List.of(version, tickers, shorter, longer, levels)) {
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> decode(bad));
            assertTrue(e.getMessage().contains("do not match this Java API"), e.getMessage());
        }
    }

    @Test
    void everyTickerHasAHyphenatedMetricName() {
        for (Ticker t : Ticker.values()) {
            assertEquals(t.name().toLowerCase(java.util.Locale.ROOT).replace('_', '-'), t.metricName());
        }
    }
}
