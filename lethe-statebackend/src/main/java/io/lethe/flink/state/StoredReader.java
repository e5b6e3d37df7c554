package io.lethe.flink.state;

import java.io.IOException;

/**
 * Turns what a lookup of one engine key found into a state's value, for one thread other than the
 * state's own: it has its own copies of the state's serializers ({@code TypeSerializer#duplicate()}),
 * so it may decode while the state's thread goes on serializing. One thread at a time may use it.
 *
 * @param <T> the value a lookup stands for
 */
@FunctionalInterface
public interface StoredReader<T> {
    /** The value of {@code stored}; null when the lookup found nothing. */
    T read(byte[] stored) throws IOException;
}
