package io.lethe.engine;

/**
 * How a column family's files are compacted; mirrors {@code lethe::CompactionStyle} (the ordinal is
 * the engine's code). A column family keeps the style it was created with.
 */
public enum CompactionStyle {
    /** Levels of disjoint files, each level a size ratio times the one above; the default. */
    LEVELED,
    /**
     * For data that leaves by its delete key, such as window contents: every file stays a sorted run of
     * its own and leaves when the horizon has dropped its pages, instead of being merged into older
     * data again and again. Only files smaller than level 1's capacity are merged, with their
     * neighbours; past {@link ColumnFamilyOptions#timeOrderedMaxFiles()} files the two neighbours
     * smallest together are.
     */
    TIME_ORDERED
}
