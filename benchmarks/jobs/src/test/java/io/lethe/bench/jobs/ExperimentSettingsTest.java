package io.lethe.bench.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

import java.util.Map;

class ExperimentSettingsTest {
    @Test
    void settingsAreKeyValuePairsSeparatedBySemicolons() {
        assertEquals(Map.of("a.b", "1", "c", "x=y"), ExperimentSettings.parse(" a.b = 1 ;; c=x=y;"));
        assertEquals(Map.of(), ExperimentSettings.parse(""));
        assertThrows(IllegalArgumentException.class, () -> ExperimentSettings.parse("a.b"));
        assertThrows(IllegalArgumentException.class, () -> ExperimentSettings.parse("=1"));
    }

    @Test
    void settingsBelongToTheirSystem() {
        System.setProperty(ExperimentSettings.PROPERTY + "lethe", "lethe.compression=ZSTD");
        try {
            assertEquals(Map.of("lethe.compression", "ZSTD"), ExperimentSettings.of("lethe"));
            assertEquals(Map.of(), ExperimentSettings.of("rocksdb"));
        } finally {
            System.clearProperty(ExperimentSettings.PROPERTY + "lethe");
        }
    }
}
