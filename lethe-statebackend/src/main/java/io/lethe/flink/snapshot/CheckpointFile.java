package io.lethe.flink.snapshot;

import org.apache.flink.runtime.state.IncrementalKeyedStateHandle.HandleAndLocalPath;

/**
 * A file of a native checkpoint: its handle with its name in the engine directory, and the
 * checksum of the bytes its handle holds. A later incremental checkpoint that references the
 * file by a placeholder records the same checksum again.
 */
public record CheckpointFile(HandleAndLocalPath file, FileChecksum checksum) {}
