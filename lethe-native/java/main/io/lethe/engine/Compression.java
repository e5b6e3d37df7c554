package io.lethe.engine;

/**
 * How data pages are compressed on disk; mirrors {@code lethe::Compression} (the ordinal is the
 * engine's code). Each page is compressed on its own; a page that would not shrink by at least an
 * eighth is stored as it is.
 */
public enum Compression {
    /** Pages stored as they are. */
    NONE,
    /** LZ4: fast to write and read; the default. */
    LZ4,
    /** Zstandard at level 3: smaller files, more CPU on writes (for example for the last level). */
    ZSTD
}
