package io.lethe.bench.suite;

import static io.lethe.bench.suite.Rows.row;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lethe.bench.suite.Csv.Row;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class EqualWorkTest {

    /** fast makes 20 records a second, slow 10; both run a steady phase from 10 s to 100 s, then a savepoint. */
    private static List<Row> timeline() {
        List<Row> t = new ArrayList<>();
        for (String backend : List.of("fast", "slow")) {
            int rate = backend.equals("fast") ? 20 : 10;
            for (int s = 1; s <= 120; s++) {
                String phase = s <= 10 ? "load" : s <= 100 ? "steady" : "savepoint";
                t.add(row("job", "keyed", "backend", backend, "seconds", Integer.toString(s), "phase", phase,
                        "records", Integer.toString(s * rate)));
            }
        }
        return t;
    }

    /** A checkpoint every 30 s whose size is its time in bytes, and a savepoint at 105 s. */
    private static List<Row> checkpoints() {
        List<Row> c = new ArrayList<>();
        for (String backend : List.of("fast", "slow")) {
            for (int s = 30; s <= 120; s += 30) {
                c.add(row("job", "keyed", "backend", backend, "seconds", Integer.toString(s), "savepoint", "0",
                        "full_bytes", Integer.toString(s)));
            }
            c.add(row("job", "keyed", "backend", backend, "seconds", "105", "savepoint", "1", "full_bytes", "999"));
        }
        return c;
    }

    @Test
    void comparesEachRunAtTheSlowestRunsRecordCount() {
        List<Row> timeline = timeline();
        assertEquals(1000, EqualWork.fewestSteadyRecords(timeline, "keyed"));
        List<Row> runs = List.of(row("job", "keyed", "backend", "fast"), row("job", "keyed", "backend", "slow"));
        List<Row> out = EqualWork.addCheckpointColumn(runs, timeline, checkpoints(), "eq");
        // fast had made 1000 records at 50 s: its checkpoint at 30 s; slow reaches 1000 at 100 s: 90 s.
        assertEquals(30, out.get(0).d("eq"));
        assertEquals(90, out.get(1).d("eq"));
        assertEquals("fast", out.get(0).s("backend"));
    }

    @Test
    void leavesTheColumnEmptyWithoutCheckpoints() {
        List<Row> out = EqualWork.addCheckpointColumn(List.of(row("job", "keyed", "backend", "fast")), timeline(),
                null, "eq");
        assertTrue(Double.isNaN(out.get(0).d("eq")));
    }
}
