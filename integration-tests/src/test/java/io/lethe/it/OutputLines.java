package io.lethe.it;

import static org.junit.jupiter.api.Assertions.fail;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Compares the lines a job wrote with the expected ones. A failure says what is missing and what
 * is extra (with the counts), where two printed lists of thousands of lines hide it.
 */
final class OutputLines {
    /** At most this many lines of each kind are named. */
    private static final int SHOWN = 20;

    private OutputLines() {}

    static void assertSame(List<String> expected, List<String> actual, String context) {
        if (expected.equals(actual)) {
            return;
        }
        Map<String, Integer> balance = new TreeMap<>();
        expected.forEach(line -> balance.merge(line, 1, Integer::sum));
        actual.forEach(line -> balance.merge(line, -1, Integer::sum));
        List<String> missing = new ArrayList<>();
        List<String> extra = new ArrayList<>();
        balance.forEach((line, n) -> {
            for (int i = 0; i < Math.abs(n); i++) {
                (n > 0 ? missing : extra).add(line);
            }
        });
        fail(expected.size() + " lines expected, " + actual.size() + " written: " + missing.size() + " missing "
                + shown(missing) + ", " + extra.size() + " extra " + shown(extra)
                + (missing.isEmpty() && extra.isEmpty() ? " (the same lines in another order)" : "")
                + (context.isEmpty() ? "" : "; " + context));
    }

    private static String shown(List<String> lines) {
        return lines.size() <= SHOWN ? lines.toString() : lines.subList(0, SHOWN) + " and " + (lines.size() - SHOWN)
                + " more";
    }
}
