package io.lethe.flink.state;

import io.lethe.engine.ColumnFamilyHandle;
import io.lethe.flink.expiry.StateExpiries;
import io.lethe.flink.expiry.StateExpiry;
import io.lethe.flink.expiry.WindowExpiry;

import org.apache.flink.runtime.state.RegisteredKeyValueStateBackendMetaInfo;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot;

/**
 * A key-value state registered with the keyed backend: its column family (named after the state),
 * Flink's meta info (name, type, serializers) and its expiry policy. Registration by the operator,
 * restores and snapshots share it; what changes after registration (serializer upgrades, a new
 * expiry after state migration) changes through its commands.
 */
public final class RegisteredState {
    private final ColumnFamilyHandle columnFamily;
    private RegisteredKeyValueStateBackendMetaInfo<?, ?> metaInfo;
    private StateExpiry expiry;

    /**
     * @param window the operator's window expiry, deciding whether this state holds window contents
     */
    public RegisteredState(ColumnFamilyHandle columnFamily, RegisteredKeyValueStateBackendMetaInfo<?, ?> metaInfo,
            WindowExpiry window) {
        this.columnFamily = columnFamily;
        this.metaInfo = metaInfo;
        this.expiry = StateExpiries.of(metaInfo.getName(), metaInfo.getStateType(),
                metaInfo.getStateSerializer(), metaInfo.getNamespaceSerializer(), window, 0);
    }

    public String name() {
        return metaInfo.getName();
    }

    public ColumnFamilyHandle columnFamily() {
        return columnFamily;
    }

    public RegisteredKeyValueStateBackendMetaInfo<?, ?> metaInfo() {
        return metaInfo;
    }

    public StateExpiry expiry() {
        return expiry;
    }

    /** The meta info as snapshots write it. */
    public StateMetaInfoSnapshot snapshotMetaInfo() {
        return metaInfo.snapshot();
    }

    /** Lets later registrations change the serializers (Flink's {@code allowFutureMetadataUpdates}). */
    public void allowSerializerUpgrades() {
        metaInfo = metaInfo.withSerializerUpgradesAllowed();
    }

    /** Replaces the expiry policy (state migration may turn TTL on or off); keeps the floor. */
    public void replaceExpiry(StateExpiry next) {
        next.raiseFloor(expiry.floor());
        expiry = next;
    }
}
