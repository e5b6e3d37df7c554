package io.lethe.kafka.streams;

import io.lethe.engine.ColumnFamilyHandle;
import io.lethe.engine.DbOptions;
import io.lethe.engine.LetheDb;
import io.lethe.engine.LetheException;

import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.errors.ProcessorStateException;
import org.apache.kafka.streams.processor.StateStoreContext;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The engine under one store of one task: a database in {@code <task state dir>/lethe/<store>},
 * opened when the store initializes. Writes go to its write-ahead log unsynced; {@link #commit()}
 * syncs it, which is what Kafka Streams' flush at each commit asks for. Iterators opened on it are
 * closed with it.
 */
final class StoreDatabase implements AutoCloseable {
    static final String PARENT_DIR = "lethe";

    private final String storeName;
    private final LetheDb db;
    private final boolean wal;
    private final Set<AutoCloseable> openIterators = ConcurrentHashMap.newKeySet();
    private volatile boolean open = true;

    private StoreDatabase(String storeName, LetheDb db, boolean wal) {
        this.storeName = storeName;
        this.db = db;
        this.wal = wal;
    }

    static StoreDatabase open(String storeName, StateStoreContext context) {
        DbOptions options = LetheStoreConfig.from(storeName, context.appConfigs()).dbOptions();
        File dir = new File(new File(context.stateDir(), PARENT_DIR), storeName);
        try {
            Files.createDirectories(dir.toPath());
            return new StoreDatabase(storeName, LetheDb.open(dir.getAbsolutePath(), options), options.useWal());
        } catch (IOException e) {
            throw new ProcessorStateException("Error opening store " + storeName + " at location " + dir, e);
        }
    }

    LetheDb db() {
        ensureOpen();
        return db;
    }

    ColumnFamilyHandle family() {
        return db().defaultColumnFamily();
    }

    boolean isOpen() {
        return open;
    }

    void ensureOpen() {
        if (!open) {
            throw new InvalidStateStoreException("Store " + storeName + " is currently closed");
        }
    }

    /** Makes every write so far durable: syncs the log, or writes the memtables out without one. */
    void commit() {
        try {
            if (wal) {
                db().syncWal();
            } else {
                db().flush();
            }
        } catch (LetheException e) {
            throw failure("flushing", e);
        }
    }

    /** Tracks an iterator until it closes, so that closing the store closes it too. */
    void track(AutoCloseable iterator) {
        openIterators.add(iterator);
    }

    void untrack(AutoCloseable iterator) {
        openIterators.remove(iterator);
    }

    ProcessorStateException failure(String what, LetheException e) {
        return new ProcessorStateException("Error " + what + " store " + storeName, e);
    }

    @Override
    public void close() {
        if (!open) {
            return;
        }
        open = false;
        for (AutoCloseable it : openIterators) {
            try {
                it.close();
            } catch (Exception e) {
                // Closing what the engine closes anyway: nothing is lost.
            }
        }
        openIterators.clear();
        db.close();
    }
}
