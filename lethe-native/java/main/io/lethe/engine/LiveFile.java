package io.lethe.engine;

/**
 * One file of a database's current state, named relative to its directory. Immutable files
 * (tables) never change once written, so incremental checkpoints can share them.
 */
public record LiveFile(String name, long sizeBytes, boolean immutable) {}
