package io.lethe.bench.suite;

import io.lethe.bench.suite.Csv.Row;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Sizes over a large-state run's steady phase rather than at one moment. An LSM tree's files and
 * checkpoints swing with its compaction cycle (a level fills, then merges into the next), so the last
 * checkpoint or the local state at the end lands at a random point of each backend's cycle; the median
 * over the steady phase does not.
 */
final class SteadySizes {
    /** The median full size of the checkpoints (not savepoints) taken during the steady phase. */
    static final String CHECKPOINT = "checkpoint_bytes_steady_median";
    /** The median local state of the steady phase's samples. */
    static final String LOCAL = "local_bytes_steady_median";

    private SteadySizes() {}

    /** {@code rows} with {@link #CHECKPOINT} and {@link #LOCAL} added; empty where data is missing. */
    static List<Row> addColumns(List<Row> rows, List<Row> timeline, List<Row> checkpoints) {
        List<Row> out = new ArrayList<>();
        for (Row row : rows) {
            Map<String, String> cells = new LinkedHashMap<>(row.cells());
            List<Row> steady = timeline == null ? List.of()
                    : Csv.where(timeline, "job", row.s("job"), "backend", row.s("backend"), "phase", "steady");
            List<Row> taken = checkpoints == null ? List.of()
                    : Csv.where(checkpoints, "job", row.s("job"), "backend", row.s("backend"));
            cells.put(CHECKPOINT, cell(Spread.of(checkpointSizesWithin(steady, taken))));
            cells.put(LOCAL, cell(Spread.of(steady.stream().map(s -> s.d("local_bytes")).toList())));
            out.add(new Row(cells));
        }
        return out;
    }

    /** Full sizes of the checkpoints taken between the first and the last steady sample. */
    static List<Double> checkpointSizesWithin(List<Row> steady, List<Row> checkpoints) {
        if (steady.isEmpty()) {
            return List.of();
        }
        double from = steady.get(0).d("seconds");
        double to = steady.get(steady.size() - 1).d("seconds");
        return checkpoints.stream()
                .filter(c -> c.d("savepoint") == 0 && c.d("seconds") >= from && c.d("seconds") <= to)
                .map(c -> c.d("full_bytes")).toList();
    }

    /** The median, in whole bytes; empty for none. */
    private static String cell(Spread sizes) {
        return sizes == null ? "" : Long.toString((long) sizes.median());
    }
}
