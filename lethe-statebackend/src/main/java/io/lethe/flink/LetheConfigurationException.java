package io.lethe.flink;

import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.runtime.throwable.ThrowableAnnotation;
import org.apache.flink.runtime.throwable.ThrowableType;

/**
 * A setup problem that restarting the job cannot fix: an invalid or unknown {@code
 * state.backend.lethe.*} option, a local directory the engine cannot use, a native library that
 * cannot be loaded. The message says what to change. Flink fails the job at once rather than
 * restarting it (the restart strategy would retry forever with checkpointing on).
 */
@ThrowableAnnotation(ThrowableType.NonRecoverableError)
public class LetheConfigurationException extends IllegalConfigurationException {
    private static final long serialVersionUID = 1L;

    public LetheConfigurationException(String message) {
        super(message);
    }

    public LetheConfigurationException(String message, Throwable cause) {
        super(message, cause);
    }
}
