package io.lethe.examples;

import java.io.Serializable;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Consumer;

/**
 * A deterministic click stream: click {@code i} is a pure function of {@code i}, so a generated
 * source, a Kafka producer and a test's expected result all see the same stream.
 *
 * <ul>
 *   <li>Event time advances {@code 1000 / clicksPerEventSecond} ms per click, each click shifted by
 *       up to ±{@link #MAX_OUT_OF_ORDERNESS}/2: out of order, never by more than {@link
 *       #MAX_OUT_OF_ORDERNESS}, so a watermark that lags by that much sees no late click.
 *   <li>Users are uniform over {@code users}; pages are skewed towards low numbers (page =
 *       pages·u², u uniform), as popular pages are.
 *   <li>With {@code duplicatePercent > 0}, that share of clicks repeats (same id, time, user, page) a
 *       click at most {@link #MAX_DUPLICATE_DISTANCE} positions earlier: an at-least-once producer's
 *       retries.
 * </ul>
 */
public record ClickStream(long clicksPerEventSecond, long users, int pages, int duplicatePercent, long startMillis)
        implements Serializable {
    /** Largest shift of a click's event time against the stream's clock, over both directions. */
    public static final Duration MAX_OUT_OF_ORDERNESS = Duration.ofSeconds(1);
    /** A duplicate repeats one of this many preceding clicks. */
    public static final int MAX_DUPLICATE_DISTANCE = 16;
    /** 2026-01-01T00:00:00Z: event time starts here. */
    public static final long DEFAULT_START_MILLIS = 1_767_225_600_000L;

    private static final long JITTER_MS = MAX_OUT_OF_ORDERNESS.toMillis();

    public ClickStream {
        if (clicksPerEventSecond < 1 || users < 1 || pages < 1 || duplicatePercent < 0 || duplicatePercent > 90) {
            throw new IllegalArgumentException("Bad click stream: " + clicksPerEventSecond + " clicks per event second, "
                    + users + " users, " + pages + " pages, " + duplicatePercent + " % duplicates");
        }
    }

    /** Click {@code i} (i >= 0). */
    public Click click(long i) {
        while (isDuplicate(i)) {
            i -= 1 + Long.remainderUnsigned(mix(i ^ 0x5DEECE66DL), MAX_DUPLICATE_DISTANCE);
        }
        long time = startMillis + i * 1000 / clicksPerEventSecond + Long.remainderUnsigned(mix(i ^ 0xA5A5L), JITTER_MS)
                - JITTER_MS / 2;
        double u = (mix(i ^ 0x3C6EF372L) >>> 11) * 0x1.0p-53;
        int page = (int) Math.min(pages - 1, (long) (pages * u * u));
        long user = Long.remainderUnsigned(mix(i ^ 0x7F4A7C15L), users);
        return new Click(i, time, user, page);
    }

    /** Whether click {@code i} repeats an earlier one. */
    public boolean isDuplicate(long i) {
        return duplicatePercent > 0 && i >= MAX_DUPLICATE_DISTANCE
                && Long.remainderUnsigned(mix(i ^ 0x1B873593L), 100) < duplicatePercent;
    }

    /** {@link #referencePageViews}'s results as CSV lines, sorted: what an output topic must hold. */
    public List<String> referencePageViewLines(long n, Duration window, boolean dedup) {
        List<String> lines = new ArrayList<>();
        referencePageViews(n, window, dedup, v -> lines.add(v.toCsv()));
        Collections.sort(lines);
        return lines;
    }

    /**
     * The page views of tumbling windows of {@code window} over clicks {@code [0, n)}, computed
     * plainly, in order of completion: what {@link ClickWindows#pageViews} must produce, with
     * duplicates removed first when {@code dedup}.
     */
    public void referencePageViews(long n, Duration window, boolean dedup, Consumer<PageViews> out) {
        long size = window.toMillis();
        TreeMap<Long, Map<Integer, Views>> open = new TreeMap<>();
        for (long i = 0; i < n; i++) {
            if (dedup && isDuplicate(i)) {
                continue;
            }
            Click c = click(i);
            long end = Math.floorDiv(c.timestamp, size) * size + size;
            Views v = open.computeIfAbsent(end, e -> new TreeMap<>()).computeIfAbsent(c.page, p -> new Views());
            v.clicks++;
            v.users.add(c.user);
            // Every later click is at least this stream's clock minus half the jitter.
            long lowest = startMillis + (i + 1) * 1000 / clicksPerEventSecond - JITTER_MS / 2;
            while (!open.isEmpty() && open.firstKey() <= lowest) {
                emit(open.pollFirstEntry(), out);
            }
        }
        while (!open.isEmpty()) {
            emit(open.pollFirstEntry(), out);
        }
    }

    private static void emit(Map.Entry<Long, Map<Integer, Views>> w, Consumer<PageViews> out) {
        w.getValue().forEach((page, v) -> out.accept(new PageViews(w.getKey(), page, v.clicks, v.users.size())));
    }

    private static final class Views {
        long clicks;
        final Set<Long> users = new HashSet<>();
    }

    /** SplitMix64's finalizer: a fixed, well-spread hash. */
    public static long mix(long x) {
        x = (x ^ (x >>> 30)) * 0xBF58476D1CE4E5B9L;
        x = (x ^ (x >>> 27)) * 0x94D049BB133111EBL;
        return x ^ (x >>> 31);
    }
}
