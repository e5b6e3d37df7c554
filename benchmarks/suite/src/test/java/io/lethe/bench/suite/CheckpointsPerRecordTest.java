package io.lethe.bench.suite;

import static io.lethe.bench.suite.Rows.row;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lethe.bench.suite.Csv.Row;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class CheckpointsPerRecordTest {

    /** Load until 10 s at 10 records/s, steady to 100 s at 50 records/s, then a savepoint phase. */
    private static List<Row> timeline() {
        List<Row> t = new ArrayList<>();
        for (int s = 1; s <= 120; s++) {
            String phase = s <= 10 ? "load" : s <= 100 ? "steady" : "savepoint";
            int records = s <= 10 ? 10 * s : 100 + 50 * (s - 10);
            t.add(row("job", "keyed", "backend", "lethe", "seconds", Integer.toString(s), "phase", phase,
                    "records", Integer.toString(records)));
        }
        return t;
    }

    /**
     * Checkpoints at 5 s (load), 20, 40.5, 60 and 80 s (steady), one at 110 s after the steady phase, and
     * a savepoint at 50 s, which no checkpoint counts its records from.
     */
    private static List<Row> checkpoints() {
        List<Row> c = new ArrayList<>();
        String[][] taken = {{"5", "999", "1"}, {"20", "1000", "10"}, {"40.5", "3050", "205"},
            {"60", "2000", "39"}, {"80", "500", "100"}, {"110", "9999", "9999"}};
        for (String[] t : taken) {
            c.add(row("job", "keyed", "backend", "lethe", "seconds", t[0], "savepoint", "0",
                    "checkpointed_bytes", t[1], "async_ms", t[2]));
        }
        c.add(row("job", "keyed", "backend", "lethe", "seconds", "50", "savepoint", "1",
                "checkpointed_bytes", "7000", "async_ms", "90000"));
        return c;
    }

    @Test
    void dividesEachSteadyCheckpointByTheRecordsMadeSinceTheOneBefore() {
        List<Row> out = CheckpointsPerRecord.addColumns(List.of(row("job", "keyed", "backend", "lethe")),
                timeline(), checkpoints());
        // Records at 5, 20, 40.5 (between 1600 at 40 s and 1650 at 41 s), 60 and 80 s: 50, 600, 1625, 2600,
        // 3600. Per steady checkpoint: 1000 / 550, 3050 / 1025, 2000 / 975, 500 / 1000 bytes, whose median
        // is the mean of 1.818 and 2.051; async 10, 205, 39, 100 ms become 18.2, 200, 40, 100 µs per record.
        assertEquals(1.935, out.get(0).d(CheckpointsPerRecord.UPLOAD), 1e-9);
        assertEquals(70.0, out.get(0).d(CheckpointsPerRecord.ASYNC), 1e-9);
    }

    @Test
    void interpolatesRecordsBetweenSamples() {
        assertEquals(1625, CheckpointsPerRecord.recordsAt(timeline(), 40.5), 1e-9);
        assertEquals(10, CheckpointsPerRecord.recordsAt(timeline(), 0.5), 1e-9);
        assertEquals(5600, CheckpointsPerRecord.recordsAt(timeline(), 500), 1e-9);
    }

    @Test
    void leavesTheColumnsEmptyWithoutData() {
        List<Row> out = CheckpointsPerRecord.addColumns(List.of(row("job", "keyed", "backend", "forst")),
                timeline(), checkpoints());
        assertTrue(Double.isNaN(out.get(0).d(CheckpointsPerRecord.UPLOAD)));
        assertTrue(Double.isNaN(out.get(0).d(CheckpointsPerRecord.ASYNC)));
        out = CheckpointsPerRecord.addColumns(List.of(row("job", "keyed", "backend", "lethe")), null, null);
        assertTrue(Double.isNaN(out.get(0).d(CheckpointsPerRecord.UPLOAD)));
    }
}
