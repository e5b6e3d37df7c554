package io.lethe.bench.jobs;

import java.util.List;

/**
 * A part of a benchmark picked by a system property (a comma-separated list of names), to look into
 * one job, query or backend; the report then lacks the rest.
 */
final class SuiteParts {
    private SuiteParts() {}

    /** The names in the property, in {@code all}'s order, or all of them when it is not set. */
    static List<String> selected(String property, List<String> all) {
        String names = System.getProperty(property);
        if (names == null || names.isBlank()) {
            return all;
        }
        List<String> wanted = List.of(names.split(","));
        for (String w : wanted) {
            if (!all.contains(w)) {
                throw new IllegalArgumentException(property + ": unknown name " + w + ", expected one of " + all);
            }
        }
        return all.stream().filter(wanted::contains).toList();
    }
}
