package io.lethe.kafka.streams;

import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.state.WindowStoreIterator;

/** The windows of one key as (start time, value), from a {@link WindowedIterator} over that key. */
final class WindowValueIterator implements WindowStoreIterator<byte[]> {
    private final WindowedIterator windows;

    WindowValueIterator(WindowedIterator windows) {
        this.windows = windows;
    }

    @Override
    public boolean hasNext() {
        return windows.hasNext();
    }

    @Override
    public KeyValue<Long, byte[]> next() {
        KeyValue<Windowed<Bytes>, byte[]> entry = windows.next();
        return KeyValue.pair(entry.key.window().start(), entry.value);
    }

    @Override
    public Long peekNextKey() {
        return windows.peekNextKey().window().start();
    }

    @Override
    public void close() {
        windows.close();
    }
}
