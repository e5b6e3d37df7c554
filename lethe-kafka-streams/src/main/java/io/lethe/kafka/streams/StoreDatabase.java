package io.lethe.kafka.streams;

import io.lethe.engine.ColumnFamilyHandle;
import io.lethe.engine.ColumnFamilyOptions;
import io.lethe.engine.Compression;
import io.lethe.engine.DbOptions;
import io.lethe.engine.LetheDb;
import io.lethe.engine.LetheException;

import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.errors.ProcessorStateException;
import org.apache.kafka.streams.processor.StateStoreContext;

import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The engine under one store of one task: a database in {@code <task state dir>/lethe/<store>}.
 * {@link #commit()}, what Kafka Streams' flush asks for, makes every write so far durable: it writes
 * the memtables out, or with a write-ahead log syncs the log. Iterators opened on it are closed with
 * it.
 */
final class StoreDatabase implements AutoCloseable {
    static final String PARENT_DIR = "lethe";
    private static final String META_FAMILY = "meta";

    private final String storeName;
    private final File dir;
    private final LetheStoreConfig config;
    private volatile DbOptions options;  // of the open engine
    private SharedBudgets.Key leased;  // the shared budget this store holds a lease of, while its engine is open
    private final Set<LetheRangeIterator> openIterators = ConcurrentHashMap.newKeySet();
    private volatile LetheDb db;  // opened at first use
    private final List<Runnable> onOpen = new ArrayList<>();
    private volatile boolean open = true;

    private StoreDatabase(String storeName, File dir, LetheStoreConfig config) {
        this.storeName = storeName;
        this.dir = dir;
        this.config = config;
    }

    /**
     * The store's database, its options read now (a bad one fails here), the engine opened at its
     * first use, as Kafka Streams' segmented stores open their segments.
     */
    static StoreDatabase open(String storeName, StateStoreContext context, Compression unsetCompression) {
        LetheStoreConfig config = LetheStoreConfig.from(storeName, context.appConfigs(), unsetCompression);
        File dir = new File(new File(context.stateDir(), PARENT_DIR), storeName);
        return new StoreDatabase(storeName, dir, config);
    }

    LetheDb db() {
        ensureOpen();
        LetheDb opened = db;
        return opened != null ? opened : openEngine();
    }

    /** The engine if it is open, without opening it. */
    LetheDb openedDb() {
        return open ? db : null;
    }

    /**
     * Opens the store again after a close, as a restore into a closed segmented store reopens its
     * segments in Kafka Streams; the engine itself opens at the next use.
     */
    synchronized void reopen() {
        open = true;
    }

    /** Runs action once the engine is open (at its first use), before anything reads or writes. */
    synchronized void onOpen(Runnable action) {
        if (db == null) {
            onOpen.add(action);
        } else {
            action.run();
        }
    }

    private synchronized LetheDb openEngine() {
        ensureOpen();
        if (db == null) {
            SharedBudgets.Key budget = config.budget();
            try {
                Files.createDirectories(dir.toPath());
                options = budget == null ? config.dbOptions() : config.dbOptions(SharedBudgets.acquire(budget));
                leased = budget;
                db = LetheDb.open(dir.getAbsolutePath(), options);
            } catch (IOException e) {
                releaseBudget();
                throw new ProcessorStateException("Error opening store " + storeName + " at location " + dir, e);
            }
            onOpen.forEach(Runnable::run);
            onOpen.clear();
        }
        return db;
    }

    ColumnFamilyHandle family() {
        return db().defaultColumnFamily();
    }

    /** A number the store keeps about itself (not one of its entries), or absent if it has none. */
    long readMeta(String key, long absent) {
        try {
            ColumnFamilyHandle meta = db().columnFamily(META_FAMILY);
            byte[] v = meta == null ? null : db().get(meta, key.getBytes(StandardCharsets.UTF_8));
            return v == null ? absent : ByteBuffer.wrap(v).getLong();
        } catch (LetheException e) {
            throw failure("reading from", e);
        }
    }

    /** Keeps a number about the store; durable with the next commit. */
    void writeMeta(String key, long value) {
        try {
            ColumnFamilyHandle meta = db().columnFamily(META_FAMILY);
            if (meta == null) {
                meta = db().createColumnFamily(META_FAMILY, ColumnFamilyOptions.DEFAULT);
            }
            db().put(meta, key.getBytes(StandardCharsets.UTF_8), ByteBuffer.allocate(8).putLong(value).array());
        } catch (LetheException e) {
            throw failure("writing to", e);
        }
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
            LetheDb opened = db();
            if (options.useWal()) {
                opened.syncWal();
            } else {
                opened.flush();
            }
        } catch (LetheException e) {
            throw failure("flushing", e);
        }
    }

    /** Tracks an iterator until it closes, so that closing the store closes it too. */
    void track(LetheRangeIterator iterator) {
        openIterators.add(iterator);
    }

    void untrack(LetheRangeIterator iterator) {
        openIterators.remove(iterator);
    }

    ProcessorStateException failure(String what, LetheException e) {
        return new ProcessorStateException("Error " + what + " store " + storeName, e);
    }

    @Override
    public synchronized void close() {
        if (!open) {
            return;
        }
        for (LetheRangeIterator it : List.copyOf(openIterators)) {
            it.closeWithStore();
        }
        open = false;
        if (db != null) {
            db.close();
            db = null;
        }
        releaseBudget();
    }

    private void releaseBudget() {
        if (leased != null) {
            SharedBudgets.release(leased);
            leased = null;
        }
    }
}
