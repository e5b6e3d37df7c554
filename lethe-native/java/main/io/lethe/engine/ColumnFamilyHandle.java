package io.lethe.engine;

/**
 * Names a column family of one open database. Valid until the family is dropped or the database
 * closed; using it afterwards throws {@link IllegalStateException}. Owned by the database: there
 * is nothing to close.
 */
public final class ColumnFamilyHandle {
    private final LetheDb owner;
    private final long nativeHandle;
    private final int id;
    private final String name;
    private volatile boolean dropped;

    ColumnFamilyHandle(LetheDb owner, long nativeHandle, int id, String name) {
        this.owner = owner;
        this.nativeHandle = nativeHandle;
        this.id = id;
        this.name = name;
    }

    public int id() {
        return id;
    }

    public String name() {
        return name;
    }

    public boolean isDropped() {
        return dropped;
    }

    LetheDb owner() {
        return owner;
    }

    long nativeHandle() {
        return nativeHandle;
    }

    void markDropped() {
        dropped = true;
    }

    @Override
    public String toString() {
        return "ColumnFamilyHandle{" + name + ", id=" + id + (dropped ? ", dropped" : "") + "}";
    }
}
