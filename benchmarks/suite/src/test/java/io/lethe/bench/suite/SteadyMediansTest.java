package io.lethe.bench.suite;

import static io.lethe.bench.suite.Rows.row;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lethe.bench.suite.Csv.Row;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class SteadyMediansTest {

    /** Load until 10 s, steady to 100 s, then a savepoint; local state is 1000 + the second in bytes. */
    private static List<Row> timeline() {
        List<Row> t = new ArrayList<>();
        for (int s = 1; s <= 120; s++) {
            String phase = s <= 10 ? "load" : s <= 100 ? "steady" : "savepoint";
            t.add(row("job", "windowed", "backend", "lethe", "seconds", Integer.toString(s), "phase", phase,
                    "local_bytes", Integer.toString(1000 + s)));
        }
        return t;
    }

    /**
     * Checkpoints at 5 s (load), 20, 40, 60 and 80 s (steady) with sizes 500, 300, 100, 900 and 200 and
     * sync + async parts of 1 + 999, 400 + 10, 5 + 95, 300 + 700 and 2 + 8 ms, one at 110 s after the
     * steady phase, and a savepoint inside it.
     */
    private static List<Row> checkpoints() {
        List<Row> c = new ArrayList<>();
        int[][] taken = {{5, 500, 1, 999}, {20, 300, 400, 10}, {40, 100, 5, 95}, {60, 900, 300, 700},
            {80, 200, 2, 8}, {110, 5000, 9000, 9000}};
        for (int[] t : taken) {
            c.add(row("job", "windowed", "backend", "lethe", "seconds", Integer.toString(t[0]), "savepoint", "0",
                    "full_bytes", Integer.toString(t[1]), "sync_ms", Integer.toString(t[2]),
                    "async_ms", Integer.toString(t[3])));
        }
        c.add(row("job", "windowed", "backend", "lethe", "seconds", "50", "savepoint", "1", "full_bytes", "7000",
                "sync_ms", "1", "async_ms", "90000"));
        return c;
    }

    @Test
    void mediansCoverTheSteadyPhaseOnly() {
        List<Row> out = SteadyMedians.addColumns(List.of(row("job", "windowed", "backend", "lethe")), timeline(),
                checkpoints());
        // Steady checkpoints 300, 100, 900, 200: the median of four is the mean of the middle two.
        assertEquals(250, out.get(0).d(SteadyMedians.CHECKPOINT));
        // Steady samples at 11..100 s: local 1011..1100, median (1055 + 1056) / 2, cut to whole bytes.
        assertEquals(1055, out.get(0).d(SteadyMedians.LOCAL));
        // Steady durations 410, 100, 1000, 10 ms (sync and async summed per checkpoint, not per part):
        // the median (100 + 410) / 2, cut to whole ms.
        assertEquals(255, out.get(0).d(SteadyMedians.CHECKPOINT_MS));
    }

    @Test
    void leavesTheColumnsEmptyWithoutData() {
        List<Row> out = SteadyMedians.addColumns(List.of(row("job", "windowed", "backend", "forst")), timeline(),
                null);
        assertTrue(Double.isNaN(out.get(0).d(SteadyMedians.CHECKPOINT)));
        assertTrue(Double.isNaN(out.get(0).d(SteadyMedians.LOCAL)));
        assertTrue(Double.isNaN(out.get(0).d(SteadyMedians.CHECKPOINT_MS)));
    }
}
