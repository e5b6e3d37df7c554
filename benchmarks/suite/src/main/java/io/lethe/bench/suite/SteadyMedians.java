package io.lethe.bench.suite;

import io.lethe.bench.suite.Csv.Row;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Medians over a large-state run's steady phase rather than values at one moment. An LSM tree's files and
 * checkpoints swing with its compaction cycle (a level fills, then merges into the next), so the last
 * checkpoint or the local state at the end lands at a random point of each backend's cycle; the median
 * over the steady phase does not. With them, the median duration of the steady phase's checkpoints,
 * synchronous and asynchronous parts together: backends split a checkpoint's work differently between
 * the part that holds the task and the part that runs beside it (a flush in the first, a copy of the
 * memtables in the second), and Flink reports a checkpoint's duration as their sum.
 */
final class SteadyMedians {
    /** The median full size of the checkpoints (not savepoints) taken during the steady phase. */
    static final String CHECKPOINT = "checkpoint_bytes_steady_median";
    /** The median local state of the steady phase's samples. */
    static final String LOCAL = "local_bytes_steady_median";
    /** The median of sync_ms + async_ms over the checkpoints (not savepoints) of the steady phase. */
    static final String CHECKPOINT_MS = "checkpoint_ms_steady_median";

    private SteadyMedians() {}

    /**
     * {@code rows} with {@link #CHECKPOINT}, {@link #LOCAL} and {@link #CHECKPOINT_MS} added; empty where
     * data is missing.
     */
    static List<Row> addColumns(List<Row> rows, List<Row> timeline, List<Row> checkpoints) {
        List<Row> out = new ArrayList<>();
        for (Row row : rows) {
            Map<String, String> cells = new LinkedHashMap<>(row.cells());
            List<Row> steady = timeline == null ? List.of()
                    : Csv.where(timeline, "job", row.s("job"), "backend", row.s("backend"), "phase", "steady");
            List<Row> taken = checkpoints == null ? List.of()
                    : Csv.where(checkpoints, "job", row.s("job"), "backend", row.s("backend"));
            List<Row> within = checkpointsWithin(steady, taken);
            cells.put(CHECKPOINT, cell(Spread.of(within.stream().map(c -> c.d("full_bytes")).toList())));
            cells.put(LOCAL, cell(Spread.of(steady.stream().map(s -> s.d("local_bytes")).toList())));
            cells.put(CHECKPOINT_MS,
                    cell(Spread.of(within.stream().map(c -> c.d("sync_ms") + c.d("async_ms")).toList())));
            out.add(new Row(cells));
        }
        return out;
    }

    /** The checkpoints (not savepoints) taken between the first and the last steady sample. */
    static List<Row> checkpointsWithin(List<Row> steady, List<Row> checkpoints) {
        if (steady.isEmpty()) {
            return List.of();
        }
        double from = steady.get(0).d("seconds");
        double to = steady.get(steady.size() - 1).d("seconds");
        return checkpoints.stream()
                .filter(c -> c.d("savepoint") == 0 && c.d("seconds") >= from && c.d("seconds") <= to)
                .toList();
    }

    /** The median, whole (bytes or ms); empty for none. */
    private static String cell(Spread spread) {
        return spread == null ? "" : Long.toString((long) spread.median());
    }
}
