package io.lethe.flink.state;

import java.util.List;
import java.util.Map;

/**
 * A run of a map state's entries in user-key order, read in one go, and where the next run starts
 * (the engine key after the last entry's), or null when there is no more.
 */
public record MapChunk<UK, UV>(List<Map.Entry<UK, UV>> entries, byte[] next) {}
