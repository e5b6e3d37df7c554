package io.lethe.bench.suite;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Reads the CSV files the benchmarks write: a header line, comma separated cells, no quoting,
 * numbers with a '.' decimal point.
 */
final class Csv {
    private Csv() {}

    /** One data line, read by column name; a missing or unparsable number reads as NaN. */
    record Row(Map<String, String> cells) {
        String s(String column) {
            return cells.getOrDefault(column, "");
        }

        double d(String column) {
            try {
                return Double.parseDouble(s(column).trim());
            } catch (NumberFormatException e) {
                return Double.NaN;
            }
        }

        int round() {
            double r = d("round");
            return Double.isNaN(r) ? 1 : (int) r;
        }
    }

    /** The data lines of {@code file}, or null when the file is missing or has no data lines. */
    static List<Row> read(Path file) throws IOException {
        if (!Files.isRegularFile(file)) {
            return null;
        }
        List<String> lines = Files.readAllLines(file);
        if (lines.size() < 2) {
            return null;
        }
        String[] header = lines.get(0).trim().split(",");
        List<Row> rows = new ArrayList<>();
        for (String line : lines.subList(1, lines.size())) {
            if (line.isBlank()) {
                continue;
            }
            String[] cells = line.trim().split(",", -1);
            Map<String, String> row = new LinkedHashMap<>();
            for (int i = 0; i < header.length && i < cells.length; i++) {
                row.put(header[i].trim(), cells[i]);
            }
            rows.add(new Row(row));
        }
        return rows.isEmpty() ? null : rows;
    }

    /**
     * A {@code key,value} file in file order, the value being everything after the first comma;
     * empty when the file is missing.
     */
    static Map<String, String> keyValues(Path file) throws IOException {
        Map<String, String> map = new LinkedHashMap<>();
        if (!Files.isRegularFile(file)) {
            return map;
        }
        List<String> lines = Files.readAllLines(file);
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            int comma = line.indexOf(',');
            if (comma < 0 || (i == 0 && line.trim().equals("key,value"))) {
                continue;
            }
            map.put(line.substring(0, comma).trim(), line.substring(comma + 1).trim());
        }
        return map;
    }

    /**
     * The distinct values of {@code column}: first those of {@code preferred} that occur, in that
     * order, then the others in order of appearance.
     */
    static List<String> distinct(Collection<Row> rows, String column, List<String> preferred) {
        Set<String> seen = new LinkedHashSet<>();
        rows.forEach(r -> seen.add(r.s(column)));
        List<String> out = new ArrayList<>();
        preferred.stream().filter(seen::contains).forEach(out::add);
        seen.stream().filter(v -> !out.contains(v)).forEach(out::add);
        return out;
    }

    /** The distinct numeric values of {@code column}, ascending, as they are written in the file. */
    static List<String> distinctNumbers(Collection<Row> rows, String column) {
        Map<Double, String> sorted = new TreeMap<>();
        rows.forEach(r -> sorted.putIfAbsent(r.d(column), r.s(column)));
        return new ArrayList<>(sorted.values());
    }

    /** The rows whose columns have the given values: {@code where(rows, "system", "lethe", "round", "1")}. */
    static List<Row> where(List<Row> rows, String... columnValuePairs) {
        return rows.stream().filter(r -> {
            for (int i = 0; i + 1 < columnValuePairs.length; i += 2) {
                if (!r.s(columnValuePairs[i]).equals(columnValuePairs[i + 1])) {
                    return false;
                }
            }
            return true;
        }).toList();
    }
}
