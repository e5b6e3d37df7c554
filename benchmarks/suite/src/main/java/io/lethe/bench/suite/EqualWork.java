package io.lethe.bench.suite;

import io.lethe.bench.suite.Csv.Row;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Compares large-state runs after the same work rather than the same time: per job, the fewest records
 * any backend made by the end of its steady phase, and each backend's last checkpoint before it had made
 * that many.
 */
final class EqualWork {
    private EqualWork() {}

    /**
     * {@code rows} with {@code column} added: the full size of each run's last checkpoint (not a savepoint)
     * taken while its records were at most the job's equal-work count; empty when the timeline or the
     * checkpoints are missing.
     */
    static List<Row> addCheckpointColumn(List<Row> rows, List<Row> timeline, List<Row> checkpoints, String column) {
        List<Row> out = new ArrayList<>();
        for (Row row : rows) {
            Map<String, String> cells = new LinkedHashMap<>(row.cells());
            String job = row.s("job");
            double records = timeline == null ? Double.NaN : fewestSteadyRecords(timeline, job);
            double bytes = Double.isNaN(records) || checkpoints == null
                    ? Double.NaN
                    : lastCheckpointWithin(Csv.where(timeline, "job", job, "backend", row.s("backend")),
                            Csv.where(checkpoints, "job", job, "backend", row.s("backend")), records);
            cells.put(column, Double.isNaN(bytes) ? "" : Long.toString((long) bytes));
            out.add(new Row(cells));
        }
        return out;
    }

    /** The fewest records any backend of the job had made at its last steady-phase sample. */
    static double fewestSteadyRecords(List<Row> timeline, String job) {
        List<Row> steady = Csv.where(timeline, "job", job, "phase", "steady");
        double fewest = Double.NaN;
        for (String backend : Csv.distinct(steady, "backend", List.of())) {
            double last = lastSteadyRecords(Csv.where(steady, "backend", backend));
            if (Double.isNaN(fewest) || last < fewest) {
                fewest = last;
            }
        }
        return fewest;
    }

    private static double lastSteadyRecords(List<Row> steadySamples) {
        return steadySamples.isEmpty() ? Double.NaN : steadySamples.get(steadySamples.size() - 1).d("records");
    }

    /**
     * The full size of the last checkpoint (in time order) taken when the run had made at most
     * {@code records} records, by its timeline's latest sample at or before the checkpoint; NaN if none.
     */
    static double lastCheckpointWithin(List<Row> samples, List<Row> checkpoints, double records) {
        double bytes = Double.NaN;
        double at = -1;
        for (Row c : checkpoints) {
            if (c.d("savepoint") != 0 || c.d("seconds") < at) {
                continue;
            }
            double made = recordsAt(samples, c.d("seconds"));
            if (!Double.isNaN(made) && made <= records) {
                bytes = c.d("full_bytes");
                at = c.d("seconds");
            }
        }
        return bytes;
    }

    private static double recordsAt(List<Row> samples, double seconds) {
        double made = Double.NaN;
        for (Row s : samples) {
            if (s.d("seconds") <= seconds) {
                made = s.d("records");
            }
        }
        return made;
    }
}
