package io.lethe.flink.timers;

import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

import java.io.IOException;
import java.util.Collection;
import java.util.Map;
import java.util.TreeMap;

/**
 * What a restored engine timer queue needs beyond its rows (see {@link TimerStore}): the sticky
 * bound S, and per key group the largest row it polled that its horizon may not have removed.
 * Merging the records of several snapshots (a restore at another parallelism) takes the highest S
 * and each key group's entry from the one snapshot that holds the key group.
 */
public record QueueRecord(long stickyBelow, Map<Integer, byte[]> lastPolled) {
    public static final QueueRecord EMPTY = new QueueRecord(0, Map.of());

    public void writeTo(DataOutputView out) throws IOException {
        out.writeLong(stickyBelow);
        out.writeInt(lastPolled.size());
        for (Map.Entry<Integer, byte[]> e : lastPolled.entrySet()) {
            out.writeInt(e.getKey());
            out.writeInt(e.getValue().length);
            out.write(e.getValue());
        }
    }

    public static QueueRecord readFrom(DataInputView in) throws IOException {
        long stickyBelow = in.readLong();
        int n = in.readInt();
        if (n < 0) {
            throw new IOException("Corrupt Lethe checkpoint metadata: " + n + " polled key groups");
        }
        Map<Integer, byte[]> lastPolled = new TreeMap<>();
        for (int i = 0; i < n; i++) {
            int keyGroup = in.readInt();
            int length = in.readInt();
            if (length < 0 || length > 1 << 26) {
                throw new IOException("Corrupt Lethe checkpoint metadata: a polled row of " + length + " bytes");
            }
            byte[] row = new byte[length];
            in.readFully(row);
            lastPolled.put(keyGroup, row);
        }
        return new QueueRecord(stickyBelow, lastPolled);
    }

    /** The records of one queue from several snapshots, as one. */
    public static QueueRecord merge(Collection<QueueRecord> records) {
        long stickyBelow = 0;
        Map<Integer, byte[]> lastPolled = new TreeMap<>();
        for (QueueRecord r : records) {
            if (Long.compareUnsigned(r.stickyBelow(), stickyBelow) > 0) {
                stickyBelow = r.stickyBelow();
            }
            lastPolled.putAll(r.lastPolled());
        }
        return new QueueRecord(stickyBelow, lastPolled);
    }
}
