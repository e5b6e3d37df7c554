package io.lethe.bench.suite;

import static io.lethe.bench.suite.Rows.row;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.lethe.bench.suite.Csv.Row;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The line that says when and on which code each large-state run ran. */
class LargeStateRunsTest {

    @Test
    void eachBackendsRunIsNamedWithItsStartCodeAndSteadyPhase() {
        List<Row> rows = List.of(
                row("job", "windowed", "backend", "forst", "steady_seconds", "600.2"),
                row("job", "windowed", "backend", "lethe", "steady_seconds", "599.8", "started_utc", "2026-12-01 05:14",
                        "code", "5ed1056"),
                row("job", "keyed", "backend", "lethe", "steady_seconds", "300.0", "started_utc", "2026-11-28 20:10",
                        "code", "c0de1a0-dirty"));
        assertEquals("Runs: lethe started 2026-12-01 05:14 UTC on 5ed1056, steady 600 s; forst start and code not"
                + " recorded, steady 600 s.", LargeStateSection.runs(rows, "windowed", List.of("lethe", "forst")));
        assertEquals("Runs: lethe started 2026-11-28 20:10 UTC on c0de1a0-dirty, steady 300 s.",
                LargeStateSection.runs(rows, "keyed", List.of("lethe", "forst")));
    }
}
