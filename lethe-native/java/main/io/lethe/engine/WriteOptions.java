package io.lethe.engine;

/** Options of one write. Immutable. */
public final class WriteOptions {
    public static final WriteOptions DEFAULT = new WriteOptions(false, false);
    public static final WriteOptions SYNC = new WriteOptions(true, false);
    public static final WriteOptions NO_WAL = new WriteOptions(false, true);

    static final int FLAG_SYNC = 1;
    static final int FLAG_DISABLE_WAL = 2;

    private final boolean sync;
    private final boolean disableWal;

    public WriteOptions(boolean sync, boolean disableWal) {
        this.sync = sync;
        this.disableWal = disableWal;
    }

    /** fsync the WAL before the write returns. */
    public boolean sync() {
        return sync;
    }

    /** Skip the WAL for this write: it is lost on a crash before the next flush. */
    public boolean disableWal() {
        return disableWal;
    }

    int flags() {
        return (sync ? FLAG_SYNC : 0) | (disableWal ? FLAG_DISABLE_WAL : 0);
    }
}
