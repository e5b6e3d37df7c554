package io.lethe.kafka.streams;

import io.lethe.engine.LetheException;
import io.lethe.engine.WriteBatch;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.kstream.Window;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.WindowStore;
import org.apache.kafka.streams.state.WindowStoreIterator;
import org.apache.kafka.streams.state.internals.WindowKeySchema;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Collection;
import java.util.Objects;
import java.util.function.Predicate;

/**
 * A persistent window store on one Lethe database per store and task, not one per time segment.
 * Entries are laid out as Kafka Streams' window key schema lays them out ({@code key, window start,
 * sequence number}, in byte order), each with its window start as delete key, so expired windows
 * leave by the engine's horizon (see {@link Retention}). Iteration follows that byte order: by key,
 * then by start time. The store reports one segment spanning all time to Kafka Streams' caching
 * layer, whose merge expects the store's order within a segment.
 */
public class LetheWindowStore extends LetheStateStore implements WindowStore<Bytes, byte[]> {
    /** The segment interval reported: one segment for all time. */
    public static final long SEGMENT_INTERVAL = Long.MAX_VALUE;

    private static final Logger LOG = LoggerFactory.getLogger(LetheWindowStore.class);
    private static final WindowKeySchema KEYS = new WindowKeySchema();
    private static final String SEQUENCE = "window-sequence";

    /** Store keys: the record key, the window start (8 bytes), a sequence number (4 bytes). */
    private static final int SUFFIX = 12;

    private final WindowedIterator.Layout layout;
    private final boolean retainDuplicates;
    private final Retention retention;
    private int sequence;

    public LetheWindowStore(String name, long retentionPeriod, long windowSize, boolean retainDuplicates) {
        super(name, LetheStoreConfig.WINDOWED_COMPRESSION);
        this.retention = new Retention(retentionPeriod);
        this.retainDuplicates = retainDuplicates;
        this.layout = new WindowedIterator.Layout(SUFFIX, k -> WindowKeySchema.fromStoreBytesKey(k, windowSize));
    }


    @Override
    protected void opened(StateStoreContext context) {
        retention.open(store, context);
        store.onOpen(() -> sequence = (int) store.readMeta(SEQUENCE, 0));
    }

    @Override
    public void put(Bytes key, byte[] value, long windowStart) {
        Objects.requireNonNull(key, "key cannot be null");
        store.db();  // opened before stream time and sequence numbers move
        synchronized (position.get()) {
            WriteBatch batch = new WriteBatch();
            if (!add(batch, key.get(), value, windowStart)) {
                retention.drop();
            }
            write(batch, "writing to");
            position.update();
        }
    }

    @Override
    public byte[] fetch(Bytes key, long windowStart) {
        Objects.requireNonNull(key, "key cannot be null");
        if (windowStart < earliest(windowStart)) {
            return null;
        }
        try {
            // Values carry their window's start as delete key (deletes carry none): files of other
            // windows are not read.
            byte[] storeKey = WindowKeySchema.toStoreKeyBinary(key, windowStart, 0).get();
            return store.db().getWithDeleteKey(store.family(), storeKey, Retention.deleteKey(windowStart));
        } catch (LetheException e) {
            throw store.failure("reading from", e);
        }
    }

    @Override
    public WindowStoreIterator<byte[]> fetch(Bytes key, long timeFrom, long timeTo) {
        return fetch(key, timeFrom, timeTo, true);
    }

    @Override
    public WindowStoreIterator<byte[]> backwardFetch(Bytes key, long timeFrom, long timeTo) {
        return fetch(key, timeFrom, timeTo, false);
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> fetch(Bytes keyFrom, Bytes keyTo, long timeFrom, long timeTo) {
        return fetch(keyFrom, keyTo, timeFrom, timeTo, true);
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> backwardFetch(Bytes keyFrom, Bytes keyTo, long timeFrom,
                                                                   long timeTo) {
        return fetch(keyFrom, keyTo, timeFrom, timeTo, false);
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> all() {
        return windows(null, null, Long.MIN_VALUE, Long.MAX_VALUE, true);
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> backwardAll() {
        return windows(null, null, Long.MIN_VALUE, Long.MAX_VALUE, false);
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> fetchAll(long timeFrom, long timeTo) {
        return windows(null, null, timeFrom, timeTo, true);
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> backwardFetchAll(long timeFrom, long timeTo) {
        return windows(null, null, timeFrom, timeTo, false);
    }

    /** Also keeps the sequence number of duplicates, and moves the horizon up to what has expired. */
    @Override
    public void flush() {
        if (store != null && store.isOpen() && retainDuplicates) {
            store.writeMeta(SEQUENCE, sequence);
        }
        super.flush();
        if (store != null && store.isOpen()) {
            retention.flushed();
        }
    }

    private WindowStoreIterator<byte[]> fetch(Bytes key, long timeFrom, long timeTo, boolean forward) {
        Objects.requireNonNull(key, "key cannot be null");
        long from = earliest(timeFrom);
        if (timeTo < from) {
            return new KeyValueIterators.EmptyWindows<>();
        }
        LetheRangeIterator scan = LetheRangeIterator.range(store,
                WindowKeySchema.toStoreKeyBinary(key, from, 0).get(),
                WindowKeySchema.toStoreKeyBinary(key, timeTo, Integer.MAX_VALUE).get(), forward).endingWithStore();
        return new WindowValueIterator(new WindowedIterator(scan, layout, key, key, startsIn(from, timeTo)));
    }

    private KeyValueIterator<Windowed<Bytes>, byte[]> fetch(Bytes keyFrom, Bytes keyTo, long timeFrom, long timeTo,
                                                            boolean forward) {
        if (keyFrom != null && keyTo != null && keyFrom.compareTo(keyTo) > 0) {
            warnInvalidRange(LOG);
            return new KeyValueIterators.Empty<>();
        }
        return windows(keyFrom, keyTo, timeFrom, timeTo, forward);
    }

    /**
     * Scans from keyFrom itself (a longer key that starts with it may sort before keyFrom and any
     * start time) to the window key schema's upper bound for keyTo, which covers shorter keys that
     * keyTo starts with.
     */
    private KeyValueIterator<Windowed<Bytes>, byte[]> windows(Bytes keyFrom, Bytes keyTo, long timeFrom, long timeTo,
                                                              boolean forward) {
        long from = earliest(timeFrom);
        if (timeTo < from) {
            return new KeyValueIterators.Empty<>();
        }
        LetheRangeIterator scan = LetheRangeIterator.range(store, keyFrom == null ? null : keyFrom.get(),
                keyTo == null ? null : KEYS.upperRange(keyTo, timeTo).get(), forward).endingWithStore();
        return new WindowedIterator(scan, layout, keyFrom, keyTo, startsIn(from, timeTo));
    }

    /**
     * The earliest start time a read from timeFrom may return: not expired, and no window starts
     * before 0. Opens the engine first, which recovers stream time.
     */
    private long earliest(long timeFrom) {
        store.db();
        return Math.max(Math.max(timeFrom, 0), retention.minLive());
    }

    private static Predicate<Window> startsIn(long from, long to) {
        return w -> w.start() >= from && w.start() <= to;
    }

    /** Adds a write of one window; false, writing nothing, if it has expired. */
    private boolean add(WriteBatch batch, byte[] key, byte[] value, long windowStart) {
        retention.observe(windowStart);
        if (retention.expired(windowStart)) {
            return false;
        }
        if (value != null) {
            int seq = retainDuplicates ? nextSequence() : 0;
            batch.put(store.family(), WindowKeySchema.toStoreKeyBinary(Bytes.wrap(key), windowStart, seq).get(), value,
                    Retention.deleteKey(windowStart));
        } else if (!retainDuplicates) {
            // With duplicates kept, a null value deletes nothing: no single entry is meant.
            batch.delete(store.family(), WindowKeySchema.toStoreKeyBinary(Bytes.wrap(key), windowStart, 0).get());
        }
        return true;
    }

    private int nextSequence() {
        sequence = (sequence + 1) & Integer.MAX_VALUE;
        return sequence;
    }

    /**
     * Changelog records are keyed by the store key; duplicates get this store's own sequence numbers.
     * Expired records are skipped silently, as Kafka Streams' own stores restore.
     */
    @Override
    protected void restore(Collection<ConsumerRecord<byte[], byte[]>> records) {
        store.reopen();
        store.db();  // opened before stream time and sequence numbers move
        WriteBatch batch = new WriteBatch();
        synchronized (position.get()) {
            for (ConsumerRecord<byte[], byte[]> record : records) {
                byte[] storeKey = record.key();
                byte[] key = Arrays.copyOf(storeKey, storeKey.length - SUFFIX);
                add(batch, key, record.value(), ByteBuffer.wrap(storeKey, key.length, 8).getLong());
                position.restored(record);
            }
            write(batch, "restoring");
        }
    }

}
