package io.lethe.bench.suite;

/**
 * A column of a timeline drawn over time.
 *
 * @param column its CSV column
 * @param scale what each value is multiplied by
 * @param what how the chart names it
 * @param fileSuffix the end of the chart's file name
 */
record Plot(String column, double scale, String what, String fileSuffix) {}
