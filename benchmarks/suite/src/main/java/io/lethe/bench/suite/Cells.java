package io.lethe.bench.suite;

import java.util.Locale;

/**
 * How the report prints numbers in its tables: a median with its min-max in parentheses, a spread
 * whose ends print alike as one value, ratios and shares with the digits that matter.
 */
final class Cells {
    static final double MIB = 1024.0 * 1024.0;

    private Cells() {}

    /**
     * A ratio cell: {@code 1.38 (1.30-1.45)}, {@code 1.38 (all 1.38)} when the values print alike, or
     * {@code 1.38 (1 round)} from one value; "n/a" without.
     */
    static String ratioCell(Spread s, String unit) {
        if (s == null) {
            return "n/a";
        }
        if (s.n() == 1) {
            return ratioNum(s.median()) + " (1 " + unit + ")";
        }
        String min = ratioNum(s.min());
        String max = ratioNum(s.max());
        return ratioNum(s.median()) + " (" + (min.equals(max) ? "all " + min : min + "-" + max) + ")";
    }

    /** An absolute cell: the median with its min-max, or the value alone when all print alike; "-" without. */
    static String abs(Spread s) {
        if (s == null) {
            return "-";
        }
        return s.n() == 1 || num(s.min()).equals(num(s.max())) ? num(s.median())
                : num(s.median()) + " (" + num(s.min()) + "-" + num(s.max()) + ")";
    }

    /** An absolute cell of bytes, in MiB. */
    static String mib(Spread bytes) {
        return abs(bytes == null ? null : bytes.scaled(1 / MIB));
    }

    /** A share cell: {@code 2.8 % (2.7-2.9 %)}, or the value alone when all print alike; "-" without. */
    static String pctCell(Spread s) {
        if (s == null) {
            return "-";
        }
        return s.n() == 1 || pct(s.min()).equals(pct(s.max())) ? pct(s.median())
                : pct(s.median()) + " (" + num(s.min() * 100) + "-" + pct(s.max()) + ")";
    }

    /** A ratio: two decimals from 0.1 to 10, fewer above, two significant digits below. */
    static String ratioNum(double x) {
        if (Double.isNaN(x)) {
            return "n/a";
        }
        if (Double.isInfinite(x)) {
            return "∞";
        }
        return String.format(Locale.ROOT, x >= 100 ? "%.0f" : x >= 10 ? "%.1f" : x >= 0.1 || x == 0 ? "%.2f" : "%.2g",
                x);
    }

    /** An absolute number: whole numbers and large ones without decimals, small ones with 3 digits. */
    static String num(double x) {
        if (!Double.isFinite(x)) {
            return Double.isNaN(x) ? "n/a" : "∞";
        }
        double a = Math.abs(x);
        String format = a >= 100 || x == Math.rint(x) ? "%,.0f" : a >= 10 ? "%.1f" : a >= 1 ? "%.2f" : "%.3g";
        return String.format(Locale.ROOT, format, x);
    }

    /** A share (a fraction) as a percentage. */
    static String pct(double fraction) {
        if (!Double.isFinite(fraction)) {
            return Double.isNaN(fraction) ? "n/a" : "∞";
        }
        return num(fraction * 100) + " %";
    }

    /** A selectivity (a fraction, as written in the CSV file) as a percentage: {@code 0.1 %}. */
    static String selectivity(String fraction) {
        return Charts.tick(Double.parseDouble(fraction) * 100) + " %";
    }
}
