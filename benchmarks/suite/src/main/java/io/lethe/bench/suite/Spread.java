package io.lethe.bench.suite;

import io.lethe.bench.suite.Csv.Row;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A median with the smallest and largest of the values it was taken of, and how the report takes
 * them: absolute values over the rounds of one system, ratios round by round between two systems
 * (the rounds ran interleaved, so a ratio never compares runs far apart in time).
 */
record Spread(double median, double min, double max, int n) {
    /** The spread of the non-NaN values, null when there are none. */
    static Spread of(Collection<Double> values) {
        List<Double> v = values.stream().filter(x -> !Double.isNaN(x)).sorted().toList();
        if (v.isEmpty()) {
            return null;
        }
        int n = v.size();
        double median = n % 2 == 1 ? v.get(n / 2) : (v.get(n / 2 - 1) + v.get(n / 2)) / 2;
        return new Spread(median, v.get(0), v.get(n - 1), n);
    }

    Spread scaled(double factor) {
        return new Spread(median * factor, min * factor, max * factor, n);
    }

    /** The spread of {@code column} over {@code rows} (one row per round); null without values. */
    static Spread values(List<Row> rows, String column) {
        return of(rows.stream().map(r -> r.d(column)).toList());
    }

    /** The median of {@code column} over {@code rows}; NaN without values. */
    static double median(List<Row> rows, String column) {
        Spread s = values(rows, column);
        return s == null ? Double.NaN : s.median();
    }

    /** The spread of the per-round ratios a / b of {@code column}, over the rounds both have. */
    static Spread ratios(List<Row> a, List<Row> b, String column) {
        Map<Integer, Double> byRound = new LinkedHashMap<>();
        b.forEach(r -> byRound.put(r.round(), r.d(column)));
        List<Double> ratios = new ArrayList<>();
        for (Row r : a) {
            Double denominator = byRound.get(r.round());
            if (denominator != null) {
                ratios.add(ratio(r.d(column), denominator));
            }
        }
        return of(ratios);
    }

    /** a / b, with 0 / 0 = 1 (both had none) and x / 0 = infinity. */
    static double ratio(double a, double b) {
        if (b == 0) {
            return a == 0 ? 1 : Double.POSITIVE_INFINITY;
        }
        return a / b;
    }
}
