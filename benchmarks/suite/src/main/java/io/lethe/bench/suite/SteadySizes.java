package io.lethe.bench.suite;

import io.lethe.bench.suite.Csv.Row;
import java.util.ArrayList;
import java.util.Arrays;
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
            cells.put(CHECKPOINT, cell(median(checkpointSizesWithin(steady, taken))));
            cells.put(LOCAL, cell(median(steady.stream().mapToDouble(s -> s.d("local_bytes")).toArray())));
            out.add(new Row(cells));
        }
        return out;
    }

    /** Full sizes of the checkpoints taken between the first and the last steady sample. */
    static double[] checkpointSizesWithin(List<Row> steady, List<Row> checkpoints) {
        if (steady.isEmpty()) {
            return new double[0];
        }
        double from = steady.get(0).d("seconds");
        double to = steady.get(steady.size() - 1).d("seconds");
        return checkpoints.stream()
                .filter(c -> c.d("savepoint") == 0 && c.d("seconds") >= from && c.d("seconds") <= to)
                .mapToDouble(c -> c.d("full_bytes")).toArray();
    }

    /** The median; NaN for none. */
    static double median(double[] values) {
        if (values.length == 0) {
            return Double.NaN;
        }
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        int mid = sorted.length / 2;
        return sorted.length % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
    }

    private static String cell(double bytes) {
        return Double.isNaN(bytes) ? "" : Long.toString((long) bytes);
    }
}
