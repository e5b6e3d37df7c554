package io.lethe.bench.suite;

import io.lethe.bench.suite.Csv.Row;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * Lethe against the best of several peers, metric by metric and round by round: in each round the
 * peer with the best value of the metric is the one Lethe is compared with, so a verdict is never
 * taken against a weaker configuration than the best one run.
 *
 * @param ratio the per-round ratios Lethe / best peer; null without a round both ran
 * @param winners the peers that were best in some round
 */
record BestPeer(Spread ratio, Set<String> winners) {
    /**
     * Lethe's rows (one per round) against the peers' rows (one per peer and round, the peer named in
     * {@code system}) on {@code column}; lower is better unless {@code higherBetter}.
     */
    static BestPeer of(List<Row> lethe, List<Row> peers, String column, boolean higherBetter) {
        return of(lethe, peers, column, higherBetter, "system");
    }

    /** As {@link #of(List, List, String, boolean)}, the peer named in {@code nameColumn}. */
    static BestPeer of(List<Row> lethe, List<Row> peers, String column, boolean higherBetter, String nameColumn) {
        List<Double> ratios = new ArrayList<>();
        Set<String> winners = new TreeSet<>();
        for (Row l : lethe) {
            Row best = null;
            for (Row p : peers) {
                if (p.round() == l.round() && !Double.isNaN(p.d(column))
                        && (best == null || (p.d(column) > best.d(column)) == higherBetter
                                && p.d(column) != best.d(column))) {
                    best = p;
                }
            }
            if (best != null) {
                ratios.add(Spread.ratio(l.d(column), best.d(column)));
                winners.add(best.s(nameColumn));
            }
        }
        return new BestPeer(Spread.of(ratios), winners);
    }
}
