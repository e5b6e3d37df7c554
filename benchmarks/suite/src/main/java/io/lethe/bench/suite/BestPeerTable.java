package io.lethe.bench.suite;

import io.lethe.bench.suite.Csv.Row;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * A table of Lethe against the best peer ({@link BestPeer}), a row per comparison: which way is better,
 * the peers that were best, the ratios and the verdict, each also a headline of the report's summary.
 */
final class BestPeerTable {
    private final Report r;
    private final String peerColumn;
    private final String unit;
    private final List<String[]> rows = new ArrayList<>();

    /**
     * @param peerColumn the column naming a row's system
     * @param unit what one ratio compares ("round", "run")
     */
    BestPeerTable(Report r, String peerColumn, String unit) {
        this.r = r;
        this.peerColumn = peerColumn;
        this.unit = unit;
    }

    /**
     * Compares Lethe's rows with the peers' on {@code m}: a table row (after the {@code lead} cells) and the
     * summary headline {@code headline}, also a point of the summary chart labelled {@code glance} unless
     * that is null.
     */
    void add(List<Row> lethe, List<Row> peers, Metric m, String headline, String glance, String... lead) {
        BestPeer best = BestPeer.of(lethe, peers, m.column(), m.higherBetter(), peerColumn);
        String verdict = Report.verdict(best.ratio(), m.higherBetter());
        rows.add(Stream.concat(Stream.of(lead), Stream.of(m.label(), m.betterIs(),
                String.join(", ", best.winners()), Cells.ratioCell(best.ratio(), unit), verdict))
                .toArray(String[]::new));
        r.headline(headline, best.ratio(), m.higherBetter(), unit, glance, verdict);
    }

    /** Appends the table to the report after {@code intro}; {@code leadColumns} name the lead cells. */
    void write(String intro, String peerHeader, String ratioHeader, String... leadColumns) {
        String[] header = Stream.concat(Stream.of(leadColumns),
                Stream.of("metric", "better is", peerHeader, ratioHeader, "verdict")).toArray(String[]::new);
        r.md().append(intro).append("\n\n").append(Report.table(header, rows));
    }
}
