package io.lethe.bench.suite;

/**
 * A column of a timeline drawn over time.
 *
 * @param column its CSV column
 * @param scale what each value is multiplied by
 * @param what how the chart names it
 * @param fileSuffix the end of the chart's file name
 * @param logScale whether the y axis is logarithmic (values that span decades, such as latencies of
 *     systems that batch and systems that do not)
 */
record Plot(String column, double scale, String what, String fileSuffix, boolean logScale) {
    /** A plot on a linear y axis from 0. */
    Plot(String column, double scale, String what, String fileSuffix) {
        this(column, scale, what, fileSuffix, false);
    }
}
