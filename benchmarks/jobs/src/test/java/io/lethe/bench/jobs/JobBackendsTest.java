package io.lethe.bench.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.apache.flink.configuration.Configuration;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;

class JobBackendsTest {
    @Test
    void overridesChangeOnlyTheirBackend() {
        String property = ExperimentSettings.PROPERTY + "lethe";
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
