package io.lethe.kafka.streams;

import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.WindowStoreIterator;

import java.util.NoSuchElementException;

/** Iterators that need no store. */
final class KeyValueIterators {
    private KeyValueIterators() {}

    /** An iterator over nothing. */
    static class Empty<K, V> implements KeyValueIterator<K, V> {
        @Override
        public boolean hasNext() {
            return false;
        }

        @Override
        public KeyValue<K, V> next() {
            throw new NoSuchElementException();
        }

        @Override
        public K peekNextKey() {
            throw new NoSuchElementException();
        }

        @Override
        public void close() {}
    }

    /** The windows of no key. */
    static final class EmptyWindows<V> extends Empty<Long, V> implements WindowStoreIterator<V> {}
}
