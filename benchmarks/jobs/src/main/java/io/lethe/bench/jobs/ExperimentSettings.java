package io.lethe.bench.jobs;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Settings of one system changed for an experiment: the system property {@code
 * lethe.bench.conf.<system>} holds {@code key=value;key=value} (e.g. {@code
 * -Dlethe.bench.conf.lethe=state.backend.lethe.compression=NONE}). A report's runs never set it, and
 * every run that applies it says so in its log.
 */
public final class ExperimentSettings {
    /** The prefix of the property; the system's name follows. */
    public static final String PROPERTY = "lethe.bench.conf.";

    private ExperimentSettings() {}

    /** The settings changed for {@code system} (empty: none). */
    public static Map<String, String> of(String system) {
        return parse(System.getProperty(PROPERTY + system, ""));
    }

    static Map<String, String> parse(String spec) {
        Map<String, String> settings = new LinkedHashMap<>();
        for (String pair : spec.split(";")) {
            if (pair.isBlank()) {
                continue;
            }
            int eq = pair.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException(PROPERTY + "*: key=value pairs separated by ';', not " + pair);
            }
            settings.put(pair.substring(0, eq).trim(), pair.substring(eq + 1).trim());
        }
        return settings;
    }
}
