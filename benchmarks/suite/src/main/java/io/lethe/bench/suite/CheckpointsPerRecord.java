package io.lethe.bench.suite;

import io.lethe.bench.suite.Csv.Row;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A large-state run's checkpoints per record the job made: each steady-phase checkpoint's upload (the
 * bytes it did not share with the checkpoint before) and its asynchronous part, divided by the records
 * made since that checkpoint before, as medians over the steady phase. The backends run the same
 * unpaced job at different speeds, so in the same checkpoint interval a faster one has more changes to
 * write and upload; per record, each checkpoint's work is set against the same input.
 */
final class CheckpointsPerRecord {
    /** The median bytes uploaded per record made since the checkpoint before. */
    static final String UPLOAD = "checkpoint_upload_bytes_per_record";
    /** The median microseconds of asynchronous part per record made since the checkpoint before. */
    static final String ASYNC = "checkpoint_async_us_per_record";

    private CheckpointsPerRecord() {}

    /** {@code rows} with {@link #UPLOAD} and {@link #ASYNC} added; empty where data is missing. */
    static List<Row> addColumns(List<Row> rows, List<Row> timeline, List<Row> checkpoints) {
        List<Row> out = new ArrayList<>();
        for (Row row : rows) {
            Map<String, String> cells = new LinkedHashMap<>(row.cells());
            List<Double> upload = new ArrayList<>();
            List<Double> async = new ArrayList<>();
            if (timeline != null && checkpoints != null) {
                measure(Csv.where(timeline, "job", row.s("job"), "backend", row.s("backend")),
                        Csv.where(checkpoints, "job", row.s("job"), "backend", row.s("backend")), upload, async);
            }
            cells.put(UPLOAD, cell(Spread.of(upload)));
            cells.put(ASYNC, cell(Spread.of(async)));
            out.add(new Row(cells));
        }
        return out;
    }

    /** Adds, per steady-phase checkpoint after another, its upload and async part per record made between. */
    private static void measure(List<Row> run, List<Row> checkpoints, List<Double> upload, List<Double> async) {
        List<Row> samples = run.stream().sorted(Comparator.comparingDouble(s -> s.d("seconds"))).toList();
        List<Row> steady = Csv.where(samples, "phase", "steady");
        List<Row> taken = checkpoints.stream().filter(c -> c.d("savepoint") == 0)
                .sorted(Comparator.comparingDouble(c -> c.d("seconds"))).toList();
        List<Row> within = SteadyMedians.checkpointsWithin(steady, taken);
        for (int i = 1; i < taken.size(); i++) {
            Row c = taken.get(i);
            if (!within.contains(c)) {
                continue;
            }
            double records = recordsAt(samples, c.d("seconds")) - recordsAt(samples, taken.get(i - 1).d("seconds"));
            if (records > 0) {
                upload.add(c.d("checkpointed_bytes") / records);
                async.add(c.d("async_ms") * 1000 / records);
            }
        }
    }

    /** The records made by {@code seconds}, interpolated between the two samples around it. */
    static double recordsAt(List<Row> samples, double seconds) {
        Row before = null;
        for (Row s : samples) {
            if (s.d("seconds") >= seconds) {
                if (before == null || s.d("seconds") == seconds) {
                    return s.d("records");
                }
                double share = (seconds - before.d("seconds")) / (s.d("seconds") - before.d("seconds"));
                return before.d("records") + share * (s.d("records") - before.d("records"));
            }
            before = s;
        }
        return before == null ? Double.NaN : before.d("records");
    }

    private static String cell(Spread spread) {
        return spread == null ? "" : String.format(Locale.ROOT, "%.3f", spread.median());
    }
}
