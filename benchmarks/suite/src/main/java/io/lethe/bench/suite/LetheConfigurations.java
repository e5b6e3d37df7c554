package io.lethe.bench.suite;

import java.util.List;

/**
 * Lethe's configurations for asynchronous state, each judged against the best peer on its own, so that
 * no metric picks the configuration that suits it: its own executor ({@code lethe}), and Flink's
 * synchronous adaptor ({@code lethe-adaptor}), Lethe's default and the path RocksDB's backend takes.
 */
final class LetheConfigurations {
    static final String EXECUTOR = "lethe";
    static final String ADAPTOR = "lethe-adaptor";
    /** In report order. */
    static final List<String> ALL = List.of(EXECUTOR, ADAPTOR);

    private LetheConfigurations() {}

    static boolean contains(String backend) {
        return ALL.contains(backend);
    }

    /** What a summary row adds after the job's name: nothing for the executor. */
    static String label(String backend) {
        return backend.equals(ADAPTOR) ? " through Flink's synchronous adaptor (Lethe's default)" : "";
    }

    /** How a table names the configuration's path for asynchronous state. */
    static String path(String backend) {
        return backend.equals(ADAPTOR) ? "Flink's synchronous adaptor" : "its executor";
    }

    /** How a sentence names Lethe in the configuration. */
    static String who(String backend) {
        return backend.equals(ADAPTOR) ? "Lethe through Flink's synchronous adaptor (its default)"
                : "Lethe's executor";
    }
}
