package io.lethe.kafka.streams;

import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.kstream.Window;
import org.apache.kafka.streams.kstream.Windowed;

import java.util.Arrays;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * The windows or sessions of a store whose keys lie in [keyFrom, keyTo] (null: unbounded) and whose
 * times pass a filter, read from a scan over store keys: the record key, then a fixed-size suffix of
 * times (as Kafka Streams' window and session key schemas lay them out). The scan's bounds may hold
 * other entries: keys of different lengths interleave in byte order, and times are not contiguous
 * across keys. They are skipped here.
 */
final class WindowedIterator extends LookaheadIterator<Windowed<Bytes>, byte[]> {
    /** How a store lays out its keys: the suffix after the record key, and how a store key reads. */
    record Layout(int suffix, Function<byte[], Windowed<Bytes>> decode) {}

    private final LetheRangeIterator scan;
    private final Layout layout;
    private final byte[] keyFrom;
    private final byte[] keyTo;
    private final Predicate<Window> times;

    WindowedIterator(LetheRangeIterator scan, Layout layout, Bytes keyFrom, Bytes keyTo, Predicate<Window> times) {
        this.scan = scan;
        this.layout = layout;
        this.keyFrom = keyFrom == null ? null : keyFrom.get();
        this.keyTo = keyTo == null ? null : keyTo.get();
        this.times = times;
    }

    /** False once the store has closed, even with an entry found ahead. */
    @Override
    public boolean hasNext() {
        return !scan.closedWithStore() && super.hasNext();
    }

    @Override
    protected KeyValue<Windowed<Bytes>, byte[]> fetch() {
        while (scan.hasNext()) {
            KeyValue<Bytes, byte[]> entry = scan.next();
            byte[] storeKey = entry.key.get();
            int keyLength = storeKey.length - layout.suffix();
            if (keyLength >= 0 && inKeyRange(storeKey, keyLength)) {
                Windowed<Bytes> windowed = layout.decode().apply(storeKey);
                if (times.test(windowed.window())) {
                    return KeyValue.pair(windowed, entry.value);
                }
            }
        }
        return null;
    }

    private boolean inKeyRange(byte[] storeKey, int keyLength) {
        return (keyFrom == null || Arrays.compareUnsigned(storeKey, 0, keyLength, keyFrom, 0, keyFrom.length) >= 0)
                && (keyTo == null || Arrays.compareUnsigned(storeKey, 0, keyLength, keyTo, 0, keyTo.length) <= 0);
    }

    @Override
    public void close() {
        scan.close();
    }
}
