package io.lethe.kafka.streams;

import io.lethe.engine.LetheDb;
import io.lethe.engine.LetheException;
import io.lethe.engine.WriteBatch;
import io.lethe.engine.WriteOptions;

import java.util.function.Function;

/**
 * A store's puts and deletes held back until the next read, commit or close of the store, or until
 * they reach {@link #LIMIT_BYTES}, then written to the engine as one write batch. Kafka Streams'
 * record cache hands a store all its dirty entries at once when it evicts one and at every commit,
 * a put each; one engine write for all of them costs less than one per put, while every read of the
 * store still sees every put before it. Not durable by itself: a commit writes it first, and the
 * stores run without a write-ahead log anyway (the changelog restores what a crash loses).
 *
 * <p>Thread-safe: the stream thread adds, interactive queries on other threads write it out.
 */
final class PendingWrites {
    /** Past this many bytes of batch, an add writes the batch out. */
    static final int LIMIT_BYTES = 256 << 10;

    private final WriteBatch batch = new WriteBatch(64 << 10);

    /**
     * Adds writes to the batch, and writes the batch to {@code db} if it reached the limit.
     *
     * @return what {@code writes} returned
     */
    synchronized <T> T add(LetheDb db, Function<WriteBatch, T> writes) throws LetheException {
        T result = writes.apply(batch);
        if (batch.sizeInBytes() >= LIMIT_BYTES) {
            writeTo(db);
        }
        return result;
    }

    /**
     * Writes what is held to {@code db}. A failed write keeps it, so that every later read, commit
     * and close of the store fails too (whichever thread asked first) and no write is dropped unseen.
     */
    synchronized void writeTo(LetheDb db) throws LetheException {
        if (batch.count() == 0) {
            return;
        }
        db.write(WriteOptions.DEFAULT, batch);
        batch.clear();
    }

    /** Forgets what is held, unwritten. */
    synchronized void discard() {
        batch.clear();
    }
}
