package io.lethe.flink.async;

/**
 * The payload of an add to reducing or aggregating state: the executor reads the stored value,
 * folds the input in with the state's function and writes it back, for the namespace the request
 * was issued in. Flink's own add is a read and then a write issued from the read's callback, which
 * takes the state's namespace at that later time: a window operator that adds one element to
 * several windows before any callback runs would write every window's result into the last one.
 */
record AppendingAdd(Object value) {}
