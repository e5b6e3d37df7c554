package io.lethe.bench.suite;

import java.awt.Color;
import java.awt.Font;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.MathContext;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.knowm.xchart.AnnotationLine;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.BitmapEncoder.BitmapFormat;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategorySeries;
import org.knowm.xchart.CategorySeries.CategorySeriesRenderStyle;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.internal.chartpart.Chart;
import org.knowm.xchart.internal.series.MarkerSeries;
import org.knowm.xchart.style.AxesChartStyler;
import org.knowm.xchart.style.CategoryStyler;
import org.knowm.xchart.style.Styler.LegendPosition;
import org.knowm.xchart.style.lines.SeriesLines;
import org.knowm.xchart.style.markers.SeriesMarkers;

/** The report's charts: XChart PNG files of one size and style, with fonts readable on a page. */
final class Charts {
    static final int WIDTH = 900;
    static final int HEIGHT = 450;
    private static final Color[] PALETTE = {
        new Color(0x1f77b4), new Color(0xd62728), new Color(0x2ca02c), new Color(0xff7f0e),
        new Color(0x9467bd), new Color(0x8c564b), new Color(0xe377c2), new Color(0x7f7f7f),
    };

    private Charts() {}

    /** Each system's colour in every chart (systems that share one never appear in the same chart). */
    private static final Map<String, Color> SYSTEM_COLORS = Map.of("lethe", PALETTE[0], "rocksdb", PALETTE[1],
            "rocksdb-ttl", PALETTE[2], "rocksdb-deletion-collector", PALETTE[3], "lethe-h8", PALETTE[4],
            "hashmap", PALETTE[2], "rocksdb-periodic", PALETTE[5], "rocksdb-heap-timers", PALETTE[3],
            "forst", PALETTE[6], "lethe-adaptor", PALETTE[4]);

    /** The i-th colour of the report's palette (cycling). */
    static Color color(int i) {
        return PALETTE[i % PALETTE.length];
    }

    /** The colour of a system or backend by name, else the i-th of the palette. */
    static Color color(String system, int i) {
        return SYSTEM_COLORS.getOrDefault(system, color(i));
    }

    /**
     * Grouped bars, one group per category and one bar per series; a series holds one value per
     * category, NaN for none. Saved as a PNG file.
     */
    static void bars(Path file, String title, String xTitle, String yTitle, List<String> categories,
            Map<String, List<Double>> series) throws IOException {
        CategoryChart chart = category(title, xTitle, yTitle);
        chart.getStyler().setYAxisMin(0.0);
        int i = 0;
        for (Map.Entry<String, List<Double>> s : series.entrySet()) {
            List<Double> values = new ArrayList<>();
            s.getValue().forEach(v -> values.add(Double.isFinite(v) ? v : 0.0));
            chart.addSeries(s.getKey(), categories, values).setFillColor(color(s.getKey(), i++));
        }
        save(chart, file);
    }

    /**
     * Bars of Lethe / RocksDB ratios per category with a dashed line at 1 (equal). Saved as a PNG file.
     */
    static void ratioBars(Path file, String title, String xTitle, String yTitle, List<String> categories,
            List<Double> ratios) throws IOException {
        CategoryChart chart = category(title, xTitle, yTitle);
        chart.getStyler().setYAxisMin(0.0);
        chart.getStyler().setLabelsVisible(false);
        List<Double> values = ratios.stream().map(v -> Double.isFinite(v) ? v : 0.0).toList();
        chart.addSeries("Lethe / RocksDB", categories, values).setFillColor(color(0));
        chart.getStyler().setLegendVisible(false);
        chart.getStyler().setAnnotationLineColor(Color.DARK_GRAY).setAnnotationLineStroke(SeriesLines.DASH_DASH);
        chart.addAnnotation(new AnnotationLine(1.0, false, false));
        save(chart, file);
    }

    /** An empty XY chart in the report's style, series to be added with {@link #line}. */
    static XYChart xy(String title, String xTitle, String yTitle) {
        XYChart chart = new XYChart(WIDTH, HEIGHT);
        chart.setTitle(title);
        chart.setXAxisTitle(xTitle);
        chart.setYAxisTitle(yTitle);
        style(chart.getStyler());
        chart.getStyler().setMarkerSize(7);
        return chart;
    }

    /**
     * An empty chart of lines over categories (all series at the category centres), series to be
     * added with {@link #line(CategoryChart, String, List, List, Color, boolean)}.
     */
    static CategoryChart categoryLines(String title, String xTitle, String yTitle) {
        CategoryChart chart = category(title, xTitle, yTitle);
        chart.getStyler().setDefaultSeriesRenderStyle(CategorySeriesRenderStyle.Line);
        chart.getStyler().setOverlapped(true);
        chart.getStyler().setMarkerSize(7);
        return chart;
    }

    /**
     * Lethe's advantage over its peers per metric as points on a log axis with a dashed line at 1 (equal):
     * above the line Lethe is better. Points are coloured by verdict ("ahead", "even (within noise)",
     * "behind", see {@link Report#verdict}); non-finite advantages are left out. Saved as a PNG file.
     */
    static void advantages(Path file, String title, List<String> metrics, List<Double> advantages,
            List<String> verdicts) throws IOException {
        CategoryChart chart = category(title, "", "Lethe's advantage (x, log scale)", HEIGHT + 150);
        CategoryStyler s = chart.getStyler();
        s.setDefaultSeriesRenderStyle(CategorySeriesRenderStyle.Scatter);
        s.setOverlapped(true);
        s.setMarkerSize(12);
        s.setXAxisLabelRotation(60);
        List<Double> plotted = new ArrayList<>();
        String[][] kinds = {{"ahead", "Lethe ahead"}, {"even (within noise)", "even (within noise)"},
            {"behind", "Lethe behind"}};
        Color[] colors = {new Color(0x2ca02c), new Color(0x7f7f7f), new Color(0xd62728)};
        for (int k = 0; k < kinds.length; k++) {
            List<Double> y = new ArrayList<>();
            for (int i = 0; i < metrics.size(); i++) {
                double a = advantages.get(i);
                boolean shown = verdicts.get(i).equals(kinds[k][0]) && Double.isFinite(a) && a > 0;
                y.add(shown ? a : null);
                if (shown) {
                    plotted.add(a);
                }
            }
            if (y.stream().anyMatch(v -> v != null)) {
                CategorySeries series = chart.addSeries(kinds[k][1], metrics, y);
                series.setMarker(SeriesMarkers.CIRCLE);
                series.setMarkerColor(colors[k]);
            }
        }
        plotted.add(1.0);
        logDecades(s, plotted);
        s.setAnnotationLineColor(Color.DARK_GRAY).setAnnotationLineStroke(SeriesLines.DASH_DASH);
        chart.addAnnotation(new AnnotationLine(1.0, false, false));
        save(chart, file);
    }

    private static CategoryChart category(String title, String xTitle, String yTitle) {
        return category(title, xTitle, yTitle, HEIGHT);
    }

    private static CategoryChart category(String title, String xTitle, String yTitle, int height) {
        CategoryChart chart = new CategoryChart(WIDTH, height);
        chart.setTitle(title);
        chart.setXAxisTitle(xTitle);
        chart.setYAxisTitle(yTitle);
        style(chart.getStyler());
        return chart;
    }

    /**
     * Makes the y axis logarithmic from the decade below the smallest positive value to the decade
     * above the largest, so that every decade gets a labelled tick (a log axis between two powers of
     * ten gets no label at all); linear from 0 when some value is not positive.
     */
    static void logDecades(AxesChartStyler s, List<Double> values) {
        double min = values.stream().mapToDouble(Double::doubleValue).min().orElse(0);
        double max = values.stream().mapToDouble(Double::doubleValue).max().orElse(0);
        if (!(min > 0)) {
            s.setYAxisMin(0.0);
            return;
        }
        s.setYAxisLogarithmic(true);
        s.setYAxisMin(Math.pow(10, Math.floor(Math.log10(min))));
        s.setYAxisMax(Math.pow(10, Math.ceil(Math.log10(max) + 1e-9)));
    }

    /** Adds a line series over categories (with markers unless dashed); null values are gaps. */
    static void line(CategoryChart chart, String name, List<String> x, List<Double> y, Color color, boolean dashed) {
        lineStyle(chart.addSeries(name, x, y), color, dashed);
    }

    /** Adds a line series (with markers unless dashed) in the given colour. */
    static XYSeries line(XYChart chart, String name, double[] x, double[] y, Color color, boolean dashed) {
        XYSeries s = chart.addSeries(name, x, y);
        lineStyle(s, color, dashed);
        return s;
    }

    private static void lineStyle(MarkerSeries s, Color color, boolean dashed) {
        s.setLineColor(color);
        s.setMarkerColor(color);
        s.setLineWidth(2f);
        if (dashed) {
            s.setLineStyle(SeriesLines.DASH_DASH);
            s.setMarker(SeriesMarkers.NONE);
        } else {
            s.setMarker(SeriesMarkers.CIRCLE);
        }
    }

    /**
     * Writes {@code chart} to {@code file} as PNG (linear y axes with {@link #tick} labels); a chart
     * without series is not drawn, and an older file of that name is removed.
     */
    static void save(Chart<?, ?> chart, Path file) throws IOException {
        if (chart.getSeriesMap().isEmpty()) {
            Files.deleteIfExists(file);
            return;
        }
        // Not on a log axis: a formatting function makes XChart place linear ticks there.
        if (chart.getStyler() instanceof AxesChartStyler s && !s.isYAxisLogarithmic()) {
            s.setyAxisTickLabelsFormattingFunction(Charts::tick);
        }
        BitmapEncoder.saveBitmap(chart, file.toString(), BitmapFormat.PNG);
    }

    private static void style(AxesChartStyler s) {
        s.setChartBackgroundColor(Color.WHITE);
        s.setPlotBackgroundColor(Color.WHITE);
        s.setPlotGridLinesColor(new Color(0xdddddd));
        s.setChartTitleFont(new Font(Font.SANS_SERIF, Font.BOLD, 17));
        s.setAxisTitleFont(new Font(Font.SANS_SERIF, Font.PLAIN, 15));
        s.setAxisTickLabelsFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13));
        s.setLegendFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13));
        s.setLegendPosition(LegendPosition.OutsideE);
        s.setLegendBorderColor(Color.WHITE);
        s.setSeriesColors(PALETTE);
        s.setAnnotationTextFont(new Font(Font.SANS_SERIF, Font.BOLD, 14));
        s.setAnnotationTextFontColor(Color.BLACK);
    }

    /** A y tick label: whole numbers with thousands separators, others with up to 3 significant digits. */
    static String tick(double y) {
        if (y == Math.rint(y)) {
            return String.format(Locale.ROOT, "%,.0f", y);
        }
        return new BigDecimal(y).round(new MathContext(3)).stripTrailingZeros().toPlainString();
    }
}
