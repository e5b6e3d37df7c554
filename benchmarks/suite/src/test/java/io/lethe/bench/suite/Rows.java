package io.lethe.bench.suite;

import io.lethe.bench.suite.Csv.Row;
import java.util.LinkedHashMap;
import java.util.Map;

/** CSV rows for tests, written as column-value pairs. */
final class Rows {
    private Rows() {}

    /** A row of the pairs {@code column, value, column, value, ...}. */
    static Row row(String... columnValuePairs) {
        Map<String, String> cells = new LinkedHashMap<>();
        for (int i = 0; i + 1 < columnValuePairs.length; i += 2) {
            cells.put(columnValuePairs[i], columnValuePairs[i + 1]);
        }
        return new Row(cells);
    }
}
