package io.lethe.flink.snapshot;

import io.lethe.engine.LetheIterator;
import io.lethe.flink.timers.RowCopy;

import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.runtime.state.CompositeKeySerializationUtils;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyValueStateIterator;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueStateSnapshot;

import java.io.IOException;
import java.util.Iterator;
import java.util.List;

/**
 * Walks every state of a snapshot in the order Flink's canonical format wants: key group by key
 * group, and inside a key group state by state (kvStateId), each state's entries in key order.
 * Key-value states come from engine iterators reading at one engine snapshot; timer queues from
 * heap queue snapshots, serialized as [key group][element] with an empty value.
 *
 * <p>Every key returned is a fresh array: the snapshot writer flips a flag bit in it in place.
 */
final class LetheKeyValueStateIterator implements KeyValueStateIterator {

    /** One state's entries, visited key group by key group in ascending order. */
    interface Source extends AutoCloseable {
        /** Positions at the first entry of key group kg; false if it has none. */
        boolean startKeyGroup(int kg) throws IOException;

        /** Moves to the next entry of the current key group; false at its end. */
        boolean nextInKeyGroup() throws IOException;

        byte[] key();

        byte[] value();

        @Override
        void close();
    }

    /**
     * A column family read through an engine iterator; rows its {@link RowCopy} leaves behind (fired
     * timers) are skipped.
     *
     * <p>An engine iterator keeps the memtables and files it began on for as long as it lives, also
     * after they were flushed or compacted away. A full snapshot reads for as long as it takes to
     * write every state, while the job goes on writing; so once an iterator is {@code refreshNanos}
     * old it is opened again at the same engine snapshot and positioned where the old one was, which
     * sees the same entries and lets go of what the engine no longer needs.
     */
    static final class EngineSource implements Source {
        /** Opens an iterator over one column family at the snapshot's engine snapshot. */
        interface Opener {
            LetheIterator open() throws IOException;
        }

        private final Opener open;
        private final long refreshNanos;
        private final int prefixBytes;
        private final byte[] prefix;
        private final RowCopy rows;
        private LetheIterator it;
        private long openedAt;
        private boolean started;

        /**
         * @param refreshNanos the age at which the iterator is opened again
         */
        EngineSource(Opener open, long refreshNanos, int prefixBytes, RowCopy rows) throws IOException {
            this.open = open;
            this.refreshNanos = refreshNanos;
            this.prefixBytes = prefixBytes;
            this.prefix = new byte[prefixBytes];
            this.rows = rows;
            reopen();
        }

        private void reopen() throws IOException {
            LetheIterator fresh = open.open();
            if (it != null) {
                it.close();
            }
            it = fresh;
            openedAt = System.nanoTime();
        }

        private boolean refreshDue() {
            return System.nanoTime() - openedAt >= refreshNanos;
        }

        @Override
        public boolean startKeyGroup(int kg) throws IOException {
            CompositeKeySerializationUtils.serializeKeyGroup(kg, prefix);
            if (refreshDue()) {
                reopen();
                started = false;
            }
            if (!started || (it.isValid() && it.compareKeyTo(prefix) < 0)) {
                it.seek(prefix);
                started = true;
            }
            return skipLeftBehind();
        }

        @Override
        public boolean nextInKeyGroup() throws IOException {
            if (refreshDue()) {
                byte[] at = it.key();
                reopen();
                it.seek(at);
                // At the snapshot the entry is still there; the seek lands on it.
                if (!it.isValid() || it.compareKeyTo(at) > 0) {
                    return skipLeftBehind();
                }
            }
            it.next();
            return skipLeftBehind();
        }

        /** Moves past rows left behind; whether a row of the current key group remains. */
        private boolean skipLeftBehind() throws IOException {
            while (it.isValid() && it.keyStartsWith(prefix)) {
                if (rows == RowCopy.AS_IS || rows.keep(it.key(), it.deleteKey(), prefixBytes)) {
                    return true;
                }
                it.next();
            }
            return false;
        }

        @Override
        public byte[] key() {
            return it.key();
        }

        @Override
        public byte[] value() {
            return it.value();
        }

        @Override
        public void close() {
            it.close();
        }

        int prefixBytes() {
            return prefixBytes;
        }
    }

    /** A heap timer queue snapshot. */
    static final class QueueSource implements Source {
        private static final byte[] EMPTY = new byte[0];
        private final HeapPriorityQueueStateSnapshot<?> snapshot;
        private final TypeSerializer<Object> serializer;
        private final int prefixBytes;
        private final DataOutputSerializer out = new DataOutputSerializer(64);
        private Iterator<?> elements;
        private int keyGroup;
        private byte[] key;

        @SuppressWarnings("unchecked")
        QueueSource(HeapPriorityQueueStateSnapshot<?> snapshot, int prefixBytes) {
            this.snapshot = snapshot;
            this.serializer = (TypeSerializer<Object>) snapshot.getMetaInfo().getElementSerializer();
            this.prefixBytes = prefixBytes;
        }

        @Override
        public boolean startKeyGroup(int kg) throws IOException {
            keyGroup = kg;
            elements = snapshot.getIteratorForKeyGroup(kg);
            return nextInKeyGroup();
        }

        @Override
        public boolean nextInKeyGroup() throws IOException {
            if (!elements.hasNext()) {
                return false;
            }
            out.clear();
            CompositeKeySerializationUtils.writeKeyGroup(keyGroup, prefixBytes, out);
            serializer.serialize(elements.next(), out);
            key = out.getCopyOfBuffer();
            return true;
        }

        @Override
        public byte[] key() {
            return key;
        }

        @Override
        public byte[] value() {
            return EMPTY;
        }

        @Override
        public void close() {}
    }

    private final List<Source> sources;  // index = kvStateId
    private final Iterator<Integer> keyGroups;
    private int keyGroup = -1;
    private int source = -1;
    private boolean valid;
    private boolean newKeyGroup;
    private boolean newState;
    private byte[] key;
    private byte[] value;

    LetheKeyValueStateIterator(List<Source> sources, KeyGroupRange range) throws IOException {
        this.sources = sources;
        this.keyGroups = range.iterator();
        advance(true);
    }

    /** Moves to the next entry; within the current source first unless `fresh`. */
    private void advance(boolean fresh) throws IOException {
        int previousGroup = keyGroup;
        int previousSource = source;
        if (!fresh && source >= 0 && sources.get(source).nextInKeyGroup()) {
            load(previousGroup, previousSource);
            return;
        }
        // Next source with entries in this key group, then the next key groups.
        int s = fresh ? sources.size() : source + 1;
        while (true) {
            for (; keyGroup >= 0 && s < sources.size(); s++) {
                if (sources.get(s).startKeyGroup(keyGroup)) {
                    source = s;
                    load(previousGroup, previousSource);
                    return;
                }
            }
            if (!keyGroups.hasNext()) {
                valid = false;
                return;
            }
            keyGroup = keyGroups.next();
            s = 0;
        }
    }

    private void load(int previousGroup, int previousSource) {
        Source current = sources.get(source);
        key = current.key();
        value = current.value();
        valid = true;
        newKeyGroup = keyGroup != previousGroup;
        newState = newKeyGroup || source != previousSource;
    }

    @Override
    public void next() throws IOException {
        advance(false);
    }

    @Override
    public int keyGroup() {
        return keyGroup;
    }

    @Override
    public byte[] key() {
        return key;
    }

    @Override
    public byte[] value() {
        return value;
    }

    @Override
    public int kvStateId() {
        return source;
    }

    @Override
    public boolean isNewKeyValueState() {
        return newState;
    }

    @Override
    public boolean isNewKeyGroup() {
        return newKeyGroup;
    }

    @Override
    public boolean isValid() {
        return valid;
    }

    @Override
    public void close() {
        for (Source s : sources) {
            s.close();
        }
    }
}
