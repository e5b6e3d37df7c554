package io.lethe.bench.jobs;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

/**
 * The state-heavy Nexmark queries in Flink SQL ({@code src/main/resources/nexmark/q*.sql}), over the views
 * {@code person}, {@code auction} and {@code bid} ({@code views.sql}), and when each one's final result
 * may vary from run to run.
 *
 * <p>The input is fixed (the same events in the same order on every run), so a result can only vary
 * where Flink's order of processing does: a two-input operator (a join) sees its inputs interleaved in
 * an order that changes from run to run, while a one-input operator sees its input in the source's
 * order. Aggregations, regular joins and windows (no event is late: events come in order and the
 * watermark trails by 4 s) give the same final multiset in any order. Ranking is where order can show:
 * among rows equal on its ORDER BY keys, ROW_NUMBER keeps the first to arrive. q18 and q19 rank one input,
 * so ties resolve the same way every run; q9 ranks a join's output.
 */
final class NexmarkQueries {
    /**
     * One query.
     *
     * @param variesWhen when its result may vary between runs on one backend, or null if never
     */
    record Query(String name, String title, String sql, String variesWhen) {}

    static final List<String> VIEWS = statements(resource("views"));

    static final List<Query> ALL = List.of(
            query("q4", "average final price per category: regular join + 2 aggregations", null),
            query("q5", "hot items: HOP window counts joined with their maxima", null),
            query("q7", "highest bid: regular join of bids with TUMBLE window maxima", null),
            query("q8", "new users: TUMBLE window aggregations of persons and auctions, joined", null),
            query("q9", "winning bids: regular join + ROW_NUMBER per auction",
                    "two bids on one auction tie for its highest price in the same millisecond: ROW_NUMBER keeps"
                            + " the first to arrive; which depends on how the join's two inputs interleave"),
            query("q11", "user sessions: SESSION window count per bidder", null),
            query("q16", "channel statistics: unbounded aggregation with distinct counts and filters", null),
            query("q18", "last bid per bidder and auction: event-time deduplication", null),
            query("q19", "top 10 bids per auction with rank: top-N", null),
            query("q20", "bids with their auction (category 10): regular join", null));

    private NexmarkQueries() {}

    static Query byName(String name) {
        return ALL.stream().filter(q -> q.name().equals(name)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("unknown query " + name));
    }

    private static Query query(String name, String title, String nondeterminism) {
        return new Query(name, title, resource(name), nondeterminism);
    }

    /** The text of {@code nexmark/<name>.sql}. */
    private static String resource(String name) {
        String path = "/nexmark/" + name + ".sql";
        try (InputStream in = NexmarkQueries.class.getResourceAsStream(path)) {
            if (in == null) {
                throw new IllegalStateException("missing resource " + path);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The statements of a script, split at the semicolons that end lines. */
    private static List<String> statements(String script) {
        return Arrays.stream(script.split(";\\s*\\n")).map(String::strip).filter(s -> !s.isEmpty()).toList();
    }
}
