package io.lethe.engine;

import java.io.IOException;

/** An engine call failed: the engine's status code and message. */
public class LetheException extends IOException {
    private static final long serialVersionUID = 1L;

    private final StatusCode code;

    public LetheException(StatusCode code, String message) {
        super(code + ": " + message);
        this.code = code;
    }

    /** Called from native code. */
    LetheException(int code, String message) {
        this(StatusCode.of(code), message);
    }

    public StatusCode code() {
        return code;
    }
}
