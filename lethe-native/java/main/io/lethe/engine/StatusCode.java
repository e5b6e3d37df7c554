package io.lethe.engine;

/**
 * The engine's status codes. The numbers are those of {@code lethe::Status::Code} in
 * {@code include/lethe/status.h}: they cross the JNI boundary and must never be renumbered.
 */
public enum StatusCode {
    OK(0),
    NOT_FOUND(1),
    CORRUPTION(2),
    NOT_SUPPORTED(3),
    INVALID_ARGUMENT(4),
    IO_ERROR(5),
    BUSY(6),
    ABORTED(7),
    NO_SPACE(8);

    private final int code;

    StatusCode(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }

    /** The status code with the given number; unknown numbers map to {@link #IO_ERROR}. */
    public static StatusCode of(int code) {
        for (StatusCode c : values()) {
            if (c.code == code) {
                return c;
            }
        }
        return IO_ERROR;
    }
}
