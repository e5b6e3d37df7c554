package io.lethe.kafka.streams;

import io.lethe.engine.LetheException;
import io.lethe.engine.WriteBatch;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.kstream.Window;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.SessionStore;
import org.apache.kafka.streams.state.internals.SessionKeySchema;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Collection;
import java.util.Objects;
import java.util.function.Predicate;

/**
 * A persistent session store on one Lethe database per store and task. Entries are laid out as Kafka
 * Streams' session key schema lays them out ({@code key, session end, session start}, in byte order),
 * each with its session end as delete key, so expired sessions leave by the engine's horizon (see
 * {@link Retention}; a session expires when its end does). Iteration follows that byte order: by
 * key, then by end and start. One segment spanning all time is reported to the caching layer.
 */
public class LetheSessionStore extends LetheStateStore implements SessionStore<Bytes, byte[]> {
    /** The segment interval reported: one segment for all time. */
    public static final long SEGMENT_INTERVAL = Long.MAX_VALUE;

    private static final Logger LOG = LoggerFactory.getLogger(LetheSessionStore.class);
    private static final SessionKeySchema KEYS = new SessionKeySchema();
    /** Store keys: the record key, then the session's end and start (8 bytes each). */
    private static final WindowedIterator.Layout LAYOUT =
            new WindowedIterator.Layout(16, k -> SessionKeySchema.from(Bytes.wrap(k)));

    private final Retention retention;

    public LetheSessionStore(String name, long retentionPeriod) {
        super(name, LetheStoreConfig.WINDOWED_COMPRESSION);
        this.retention = new Retention(retentionPeriod);
    }


    @Override
    protected void opened(StateStoreContext context) {
        retention.open(store, context);
    }

    @Override
    public void put(Windowed<Bytes> sessionKey, byte[] aggregate) {
        Objects.requireNonNull(sessionKey, "sessionKey cannot be null");
        store.db();  // opened before stream time moves
        synchronized (position.get()) {
            WriteBatch batch = new WriteBatch();
            if (!add(batch, SessionKeySchema.toBinary(sessionKey).get(), sessionKey.window().end(), aggregate)) {
                retention.drop();
            }
            write(batch, "writing to");
            position.update();
        }
    }

    @Override
    public void remove(Windowed<Bytes> sessionKey) {
        Objects.requireNonNull(sessionKey, "sessionKey cannot be null");
        synchronized (position.get()) {
            try {
                store.db().delete(store.family(), SessionKeySchema.toBinary(sessionKey).get());
            } catch (LetheException e) {
                throw store.failure("writing to", e);
            }
            position.update();
        }
    }

    @Override
    public byte[] fetchSession(Bytes key, long sessionStartTime, long sessionEndTime) {
        Objects.requireNonNull(key, "key cannot be null");
        if (sessionEndTime < earliestEnd(sessionEndTime) || !store.isOpen()) {
            return null;
        }
        try {
            return store.db().get(store.family(),
                    SessionKeySchema.toBinary(key, sessionStartTime, sessionEndTime).get());
        } catch (LetheException e) {
            throw store.failure("reading from", e);
        }
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> findSessions(long earliestSessionEndTime,
                                                                  long latestSessionEndTime) {
        long earliest = earliestEnd(earliestSessionEndTime);
        return sessions(null, null, latestSessionEndTime,
                w -> w.end() >= earliest && w.end() <= latestSessionEndTime, true);
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> findSessions(Bytes key, long earliestSessionEndTime,
                                                                  long latestSessionStartTime) {
        Objects.requireNonNull(key, "key cannot be null");
        return overlapping(key, key, earliestSessionEndTime, latestSessionStartTime, true);
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> backwardFindSessions(Bytes key, long earliestSessionEndTime,
                                                                          long latestSessionStartTime) {
        Objects.requireNonNull(key, "key cannot be null");
        return overlapping(key, key, earliestSessionEndTime, latestSessionStartTime, false);
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> findSessions(Bytes keyFrom, Bytes keyTo,
                                                                  long earliestSessionEndTime,
                                                                  long latestSessionStartTime) {
        return checkedRange(keyFrom, keyTo, earliestSessionEndTime, latestSessionStartTime, true);
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> backwardFindSessions(Bytes keyFrom, Bytes keyTo,
                                                                          long earliestSessionEndTime,
                                                                          long latestSessionStartTime) {
        return checkedRange(keyFrom, keyTo, earliestSessionEndTime, latestSessionStartTime, false);
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> fetch(Bytes key) {
        Objects.requireNonNull(key, "key cannot be null");
        return overlapping(key, key, 0, Long.MAX_VALUE, true);
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> backwardFetch(Bytes key) {
        Objects.requireNonNull(key, "key cannot be null");
        return overlapping(key, key, 0, Long.MAX_VALUE, false);
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> fetch(Bytes keyFrom, Bytes keyTo) {
        return checkedRange(keyFrom, keyTo, 0, Long.MAX_VALUE, true);
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> backwardFetch(Bytes keyFrom, Bytes keyTo) {
        return checkedRange(keyFrom, keyTo, 0, Long.MAX_VALUE, false);
    }

    /** Also moves the horizon up to what has expired. */
    @Override
    public void flush() {
        super.flush();
        if (store != null && store.isOpen()) {
            retention.flushed();
        }
    }

    private KeyValueIterator<Windowed<Bytes>, byte[]> checkedRange(Bytes keyFrom, Bytes keyTo, long earliestEnd,
                                                                   long latestStart, boolean forward) {
        if (keyFrom != null && keyTo != null && keyFrom.compareTo(keyTo) > 0) {
            warnInvalidRange(LOG);
            return new KeyValueIterators.Empty<>();
        }
        return overlapping(keyFrom, keyTo, earliestEnd, latestStart, forward);
    }

    /** Sessions that end at or after earliestEnd and start at or before latestStart. */
    private KeyValueIterator<Windowed<Bytes>, byte[]> overlapping(Bytes keyFrom, Bytes keyTo, long earliestEnd,
                                                                  long latestStart, boolean forward) {
        long earliest = earliestEnd(earliestEnd);
        return sessions(keyFrom, keyTo, latestStart, w -> w.end() >= earliest && w.start() <= latestStart, forward);
    }

    /**
     * Scans from keyFrom itself (a longer key that starts with it may sort before it with any times)
     * to the session key schema's upper bound for keyTo, which covers shorter keys that keyTo starts
     * with.
     */
    private KeyValueIterator<Windowed<Bytes>, byte[]> sessions(Bytes keyFrom, Bytes keyTo, long latestStart,
                                                               Predicate<Window> times, boolean forward) {
        if (!store.isOpen()) {
            return new KeyValueIterators.Empty<>();  // as Kafka Streams' segmented stores, which have no segments then
        }
        LetheRangeIterator scan = LetheRangeIterator.range(store, keyFrom == null ? null : keyFrom.get(),
                keyTo == null ? null : KEYS.upperRange(keyTo, latestStart).get(), forward).endingWithStore();
        return new WindowedIterator(scan, LAYOUT, keyFrom, keyTo, times);
    }

    /**
     * The earliest session end a read from earliestEnd may return. Opens the engine, which recovers
     * stream time; a closed store has nothing to return.
     */
    private long earliestEnd(long earliestEnd) {
        if (!store.isOpen()) {
            return Long.MAX_VALUE;
        }
        store.db();
        return Math.max(earliestEnd, retention.minLive());
    }

    /** Adds a write of one session; false, writing nothing, if it has expired. */
    private boolean add(WriteBatch batch, byte[] storeKey, long end, byte[] aggregate) {
        retention.observe(end);
        if (retention.expired(end)) {
            return false;
        }
        if (aggregate != null) {
            batch.put(store.family(), storeKey, aggregate, Retention.deleteKey(end));
        } else {
            batch.delete(store.family(), storeKey);
        }
        return true;
    }

    /** Changelog records are keyed by the store key; expired ones are skipped silently, as Kafka Streams' own stores restore. */
    @Override
    protected void restore(Collection<ConsumerRecord<byte[], byte[]>> records) {
        store.reopen();
        store.db();  // opened before stream time moves
        WriteBatch batch = new WriteBatch();
        synchronized (position.get()) {
            for (ConsumerRecord<byte[], byte[]> record : records) {
                Windowed<Bytes> session = SessionKeySchema.from(Bytes.wrap(record.key()));
                add(batch, record.key(), session.window().end(), record.value());
                position.restored(record);
            }
            write(batch, "restoring");
        }
    }

}
