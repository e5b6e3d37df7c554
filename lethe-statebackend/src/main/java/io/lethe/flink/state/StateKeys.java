package io.lethe.flink.state;

import io.lethe.engine.LetheIterator;

import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.runtime.state.CompositeKeySerializationUtils;
import org.apache.flink.util.FlinkRuntimeException;

import java.io.IOException;
import java.util.Arrays;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.Spliterator;
import java.util.Spliterators;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;

/**
 * The keys (and namespaces) a registered state holds, read from its column family in key order:
 * Flink's {@code getKeys} and {@code getKeysAndNamespaces}. Each stream holds an engine iterator
 * until it is closed.
 */
public final class StateKeys<K> {
    private final LetheStateContext<K> context;

    public StateKeys(LetheStateContext<K> context) {
        this.context = context;
    }

    /** The distinct keys with an entry in {@code namespace}. */
    @SuppressWarnings("unchecked")
    public <N> Stream<K> inNamespace(RegisteredState state, N namespace) {
        TypeSerializer<K> keys = context.getKeySerializer();
        TypeSerializer<N> ns = (TypeSerializer<N>) state.metaInfo().getNamespaceSerializer();
        boolean ambiguous = CompositeKeySerializationUtils.isAmbiguousKeyPossible(keys, ns);
        byte[] namespaceBytes;
        try {
            DataOutputSerializer out = new DataOutputSerializer(8);
            CompositeKeySerializationUtils.writeNameSpace(namespace, ns, out, ambiguous);
            namespaceBytes = out.getCopyOfBuffer();
        } catch (IOException e) {
            throw new FlinkRuntimeException("Failed to serialize a namespace", e);
        }
        // An entry belongs to the namespace if the bytes right after its key start with it.
        return distinct(state, (key, in) -> {
            K k = CompositeKeySerializationUtils.readKey(keys, in, ambiguous);
            int offset = key.length - in.available();
            return key.length - offset >= namespaceBytes.length
                            && Arrays.equals(key, offset, offset + namespaceBytes.length, namespaceBytes, 0,
                                    namespaceBytes.length)
                    ? k
                    : null;
        });
    }

    /** The distinct (key, namespace) pairs with an entry. */
    @SuppressWarnings("unchecked")
    public <N> Stream<Tuple2<K, N>> withNamespaces(RegisteredState state) {
        TypeSerializer<K> keys = context.getKeySerializer();
        TypeSerializer<N> ns = (TypeSerializer<N>) state.metaInfo().getNamespaceSerializer();
        boolean ambiguous = CompositeKeySerializationUtils.isAmbiguousKeyPossible(keys, ns);
        return distinct(state, (key, in) -> Tuple2.of(
                CompositeKeySerializationUtils.readKey(keys, in, ambiguous),
                CompositeKeySerializationUtils.readNamespace(ns, in, ambiguous)));
    }

    /** The number of entries of a state (Flink's test hook {@code numKeyValueStateEntries}). */
    public int countEntries(RegisteredState state) throws IOException {
        int count = 0;
        try (LetheIterator it = context.db().newIterator(state.columnFamily())) {
            for (it.seekToFirst(); it.isValid(); it.next()) {
                count++;
            }
        }
        return count;
    }

    /** Decodes an entry's key (positioned after the key group); null skips the entry. */
    private interface EntryDecoder<T> {
        T decode(byte[] key, DataInputDeserializer in) throws IOException;
    }

    /** The distinct decoded values of a state's entries, in key order, as a stream. */
    private <T> Stream<T> distinct(RegisteredState state, EntryDecoder<T> decoder) {
        DistinctIterator<T> it = new DistinctIterator<>(state, decoder);
        return StreamSupport.stream(Spliterators.spliteratorUnknownSize(it, Spliterator.ORDERED), false)
                .onClose(it::close);
    }

    /** Entries of one key decode to the same value and are adjacent: emit each value once. */
    private final class DistinctIterator<T> implements Iterator<T>, AutoCloseable {
        private final LetheIterator it;
        private final EntryDecoder<T> decoder;
        private final DataInputDeserializer in = new DataInputDeserializer();
        private T next;
        private T previous;

        DistinctIterator(RegisteredState state, EntryDecoder<T> decoder) {
            this.decoder = decoder;
            try {
                this.it = context.db().newIterator(state.columnFamily());
                it.seekToFirst();
            } catch (IOException e) {
                throw new FlinkRuntimeException("Failed to iterate the keys of a Lethe state", e);
            }
        }

        @Override
        public boolean hasNext() {
            try {
                while (next == null && it.isValid()) {
                    byte[] key = it.key();
                    in.setBuffer(key);
                    in.skipBytesToRead(context.keyGroupPrefixBytes());
                    T value = decoder.decode(key, in);
                    if (value != null && !value.equals(previous)) {
                        next = value;
                        previous = value;
                    }
                    it.next();
                }
                return next != null;
            } catch (IOException e) {
                throw new FlinkRuntimeException("Failed to iterate the keys of a Lethe state", e);
            }
        }

        @Override
        public T next() {
            if (!hasNext()) {
                throw new NoSuchElementException();
            }
            T r = next;
            next = null;
            return r;
        }

        @Override
        public void close() {
            it.close();
        }
    }
}
