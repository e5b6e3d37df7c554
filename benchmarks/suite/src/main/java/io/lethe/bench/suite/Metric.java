package io.lethe.bench.suite;

/**
 * A measured quantity of a results table.
 *
 * @param column its CSV column
 * @param label how the report names it
 * @param higherBetter whether a higher value is better (else lower is)
 */
record Metric(String column, String label, boolean higherBetter) {
    /** "higher" or "lower": which way is better, as the report's tables say it. */
    String betterIs() {
        return higherBetter ? "higher" : "lower";
    }
}
