package io.lethe.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import io.lethe.flink.LetheOptions;
import io.lethe.flink.LetheStateBackend;

import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.GlobalConfiguration;
import org.apache.flink.runtime.state.StateBackendLoader;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

/** examples/conf/config.yaml is a Flink configuration that selects and configures Lethe as it says. */
class ConfigYamlTest {
    @Test
    void theExampleConfigurationSelectsLethe() throws Exception {
        Configuration conf = GlobalConfiguration.loadConfiguration("conf");
        LetheStateBackend backend = assertInstanceOf(LetheStateBackend.class,
                StateBackendLoader.loadStateBackendFromConfig(conf, getClass().getClassLoader(), null));
        assertEquals(Duration.ofMinutes(10), backend.get(LetheOptions.DELETE_PERSISTENCE_THRESHOLD));
        assertEquals("auto", backend.get(LetheOptions.PAGES_PER_TILE));
        assertEquals(List.of("/var/lib/flink/lethe"), backend.get(LetheOptions.LOCAL_DIRECTORIES));
        assertEquals(true, backend.isIncrementalCheckpointsEnabled());
        assertEquals(Duration.ofSeconds(30), conf.get(CheckpointingOptions.CHECKPOINTING_INTERVAL));
        assertEquals("file:///var/lib/flink/checkpoints", conf.get(CheckpointingOptions.CHECKPOINTS_DIRECTORY));
    }
}
