package io.lethe.flink;

import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.runtime.state.StateBackendFactory;

/**
 * Creates a {@link LetheStateBackend} from the Flink configuration. Select it with {@code
 * state.backend.type: io.lethe.flink.LetheStateBackendFactory}. Called about once per task and on
 * the JobManager: it validates the options and loads no native code.
 */
public class LetheStateBackendFactory implements StateBackendFactory<LetheStateBackend> {
    @Override
    public LetheStateBackend createFromConfig(ReadableConfig config, ClassLoader classLoader)
            throws IllegalConfigurationException {
        return new LetheStateBackend().configure(config, classLoader);
    }
}
