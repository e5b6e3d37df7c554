package io.lethe.flink.state;

import io.lethe.engine.ColumnFamilyHandle;
import io.lethe.engine.ColumnFamilyOptions;
import io.lethe.engine.LetheDb;
import io.lethe.flink.expiry.StateExpiries;
import io.lethe.flink.expiry.WindowExpiry;

import org.apache.flink.runtime.state.RegisteredKeyValueStateBackendMetaInfo;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot;

import java.io.IOException;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The key-value states of one keyed backend by name, in registration order (the order snapshots
 * write them), each with a column family of its own. Restores register states from snapshot meta
 * info; the operator registers them from descriptors through the backend.
 */
public final class StateRegistry {
    private final Map<String, RegisteredState> states = new LinkedHashMap<>();
    private final ColumnFamilyOptions columnFamilyOptions;
    private final ColumnFamilyOptions ttlColumnFamilyOptions;
    private final ColumnFamilyOptions windowColumnFamilyOptions;
    private final WindowExpiry window;

    /**
     * @param ttlColumnFamilyOptions the options of a new column family of a state with a TTL
     * @param windowColumnFamilyOptions the options of a new column family of window contents while the
     *     horizon follows the windows
     * @param window the operator's window expiry, deciding which state holds window contents
     */
    public StateRegistry(ColumnFamilyOptions columnFamilyOptions, ColumnFamilyOptions ttlColumnFamilyOptions,
            ColumnFamilyOptions windowColumnFamilyOptions, WindowExpiry window) {
        this.columnFamilyOptions = columnFamilyOptions;
        this.ttlColumnFamilyOptions = ttlColumnFamilyOptions;
        this.windowColumnFamilyOptions = windowColumnFamilyOptions;
        this.window = window;
    }

    /** The options a new column family is created with, but a state's with a TTL. */
    public ColumnFamilyOptions columnFamilyOptions() {
        return columnFamilyOptions;
    }

    /** The state registered under {@code name}, or null. */
    public RegisteredState get(String name) {
        return states.get(name);
    }

    /** Every registered state, in registration order. */
    public Collection<RegisteredState> all() {
        return Collections.unmodifiableCollection(states.values());
    }

    /** Registers a new state under this meta info's name, creating its column family if missing. */
    public RegisteredState register(LetheDb db, RegisteredKeyValueStateBackendMetaInfo<?, ?> meta)
            throws IOException {
        return register(db, meta, false);
    }

    private RegisteredState register(LetheDb db, RegisteredKeyValueStateBackendMetaInfo<?, ?> meta,
            boolean fromSavepoint) throws IOException {
        ColumnFamilyOptions options = optionsOf(meta, fromSavepoint);
        RegisteredState state = new RegisteredState(columnFamily(db, meta.getName(), options), meta, window);
        states.put(meta.getName(), state);
        return state;
    }

    /**
     * The options a new column family of this state is created with. Window contents restored from a
     * canonical savepoint carry the maximum delete key, and so do the clears of those windows: such
     * tombstones leave a time-ordered family only by merging every older file, so it is leveled.
     */
    private ColumnFamilyOptions optionsOf(RegisteredKeyValueStateBackendMetaInfo<?, ?> meta, boolean fromSavepoint) {
        if (StateExpiries.carriesTtlTimestamps(meta.getStateSerializer())) {
            return ttlColumnFamilyOptions;
        }
        boolean windows = !fromSavepoint && window.isActive() && StateExpiries.holdsWindowContents(meta.getName(),
                meta.getStateType(), meta.getNamespaceSerializer(), window);
        return windows ? windowColumnFamilyOptions : columnFamilyOptions;
    }

    /**
     * Registers a state from a snapshot's meta info; the first registration of a name wins.
     *
     * @param fromSavepoint whether its entries come from a canonical savepoint (not a native checkpoint)
     */
    public RegisteredState registerRestored(LetheDb db, StateMetaInfoSnapshot meta, boolean fromSavepoint)
            throws IOException {
        RegisteredState state = states.get(meta.getName());
        return state != null ? state : register(db, new RegisteredKeyValueStateBackendMetaInfo<>(meta), fromSavepoint);
    }

    /** Forgets every state (the backend is disposed). */
    public void clear() {
        states.clear();
    }

    /** The state's column family: an existing one keeps the options it was created with. */
    private static ColumnFamilyHandle columnFamily(LetheDb db, String stateName, ColumnFamilyOptions options)
            throws IOException {
        ColumnFamilyHandle cf = db.columnFamily(stateName);
        return cf != null ? cf : db.createColumnFamily(stateName, options);
    }
}
