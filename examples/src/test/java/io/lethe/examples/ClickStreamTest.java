package io.lethe.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.HashSet;
import java.util.Set;

/** The generated stream keeps the promises the jobs and their expected results rely on. */
class ClickStreamTest {
    private static final ClickStream STREAM = new ClickStream(10_000, 1_000, 50, 10, ClickStream.DEFAULT_START_MILLIS);

    @Test
    void disorderStaysWithinTheBoundAndRepeatsCopyARecentClick() {
        long maxSeen = Long.MIN_VALUE / 2;
        long duplicates = 0;
        for (long i = 0; i < 200_000; i++) {
            Click c = STREAM.click(i);
            // A watermark lagging by the bound never passes a later click.
            assertTrue(c.timestamp > maxSeen - ClickStream.MAX_OUT_OF_ORDERNESS.toMillis(), "click " + i + " is late");
            maxSeen = Math.max(maxSeen, c.timestamp);
            if (STREAM.isDuplicate(i)) {
                duplicates++;
                assertTrue(c.id < i && c.id >= i - 16L * ClickStream.MAX_DUPLICATE_DISTANCE, "repeat " + i + " of " + c.id);
                assertEquals(STREAM.click(c.id), c);
                assertTrue(!STREAM.isDuplicate(c.id));
            } else {
                assertEquals(i, c.id);
            }
            assertTrue(c.page >= 0 && c.page < 50 && c.user >= 0 && c.user < 1_000);
        }
        assertTrue(duplicates > 18_000 && duplicates < 22_000, duplicates + " repeats in 200,000 at 10 %");
        assertEquals(STREAM.click(12_345), Click.parse(STREAM.click(12_345).toCsv()));
    }

    @Test
    void referenceWindowsCountEveryClickOnce() {
        long n = 100_000;
        long[] clicks = {0, 0};
        Set<String> keys = new HashSet<>();
        STREAM.referencePageViews(n, Duration.ofSeconds(1), false, v -> {
            clicks[0] += v.clicks;
            assertTrue(v.users >= 1 && v.users <= v.clicks);
            assertEquals(0, v.windowEnd % 1000);
            assertTrue(keys.add(v.windowEnd + "/" + v.page), "window " + v + " emitted twice");
        });
        STREAM.referencePageViews(n, Duration.ofSeconds(1), true, v -> clicks[1] += v.clicks);
        assertEquals(n, clicks[0]);
        long originals = 0;
        for (long i = 0; i < n; i++) {
            originals += STREAM.isDuplicate(i) ? 0 : 1;
        }
        assertEquals(originals, clicks[1]);
    }
}
