package io.lethe.flink.async;

import org.apache.flink.runtime.asyncprocessing.StateRequestType;

/**
 * Where a map iteration in chunks goes on: the payload of its next {@code ITERATOR_LOADING}
 * request. The iteration's kind (entries, keys or values), the engine key prefix of the map (key
 * and namespace) and the engine key to read on from.
 */
record MapResume(StateRequestType type, byte[] prefix, byte[] from) {}
