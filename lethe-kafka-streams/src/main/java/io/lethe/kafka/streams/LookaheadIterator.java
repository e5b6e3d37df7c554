package io.lethe.kafka.streams;

import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;

import java.util.NoSuchElementException;

/** A {@link KeyValueIterator} that finds each entry one ahead, so that it can be peeked at. */
abstract class LookaheadIterator<K, V> implements KeyValueIterator<K, V> {
    private KeyValue<K, V> next;

    /** The next entry, or null at the end. */
    protected abstract KeyValue<K, V> fetch();

    @Override
    public boolean hasNext() {
        if (next == null) {
            next = fetch();
        }
        return next != null;
    }

    @Override
    public KeyValue<K, V> next() {
        if (!hasNext()) {
            throw new NoSuchElementException();
        }
        KeyValue<K, V> entry = next;
        next = null;
        return entry;
    }

    @Override
    public K peekNextKey() {
        if (!hasNext()) {
            throw new NoSuchElementException();
        }
        return next.key;
    }
}
