package io.lethe.bench.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.apache.flink.configuration.Configuration;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.Map;

class JobBackendsTest {
    @Test
    void overridesAreKeyValuePairsSeparatedBySemicolons() {
        assertEquals(Map.of("a.b", "1", "c", "x=y"), JobBackends.overrides(" a.b = 1 ;; c=x=y;"));
        assertEquals(Map.of(), JobBackends.overrides(""));
        assertThrows(IllegalArgumentException.class, () -> JobBackends.overrides("a.b"));
        assertThrows(IllegalArgumentException.class, () -> JobBackends.overrides("=1"));
    }

    @Test
    void overridesChangeOnlyTheirBackend() {
        String property = JobBackends.OVERRIDES_PROPERTY + "lethe";
        System.setProperty(property, "state.backend.lethe.compression=NONE");
        try {
            Configuration lethe = new Configuration();
            JobBackends.configure("lethe", lethe, Path.of("/tmp/x"));
            assertEquals("NONE", lethe.toMap().get("state.backend.lethe.compression"));
            Configuration rocks = new Configuration();
            JobBackends.configure("rocksdb", rocks, Path.of("/tmp/x"));
            assertEquals(null, rocks.toMap().get("state.backend.lethe.compression"));
        } finally {
            System.clearProperty(property);
        }
    }
}
