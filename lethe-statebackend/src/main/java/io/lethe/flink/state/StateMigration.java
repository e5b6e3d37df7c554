package io.lethe.flink.state;

import io.lethe.engine.ColumnFamilyHandle;
import io.lethe.engine.LetheDb;
import io.lethe.engine.LetheIterator;
import io.lethe.engine.ReadOptions;
import io.lethe.engine.Snapshot;
import io.lethe.engine.WriteBatch;
import io.lethe.engine.WriteOptions;
import io.lethe.flink.expiry.StateExpiries;
import io.lethe.flink.expiry.StateExpiry;
import io.lethe.flink.expiry.WindowExpiry;

import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.base.MapSerializer;
import org.apache.flink.api.common.typeutils.base.MapSerializerSnapshot;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.runtime.state.RegisteredKeyValueStateBackendMetaInfo;
import org.apache.flink.runtime.state.ttl.TtlAwareSerializer;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;
import org.apache.flink.util.StateMigrationException;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Flink's state migration on Lethe: every value of a state is rewritten for its new serializer
 * (which may also turn TTL on or off), with delete keys from the new serializer's expiry.
 */
public final class StateMigration {
    private static final Logger LOG = LoggerFactory.getLogger(StateMigration.class);
    /** Rewritten values are written in batches of about this many bytes. */
    private static final int BATCH_BYTES = 4 << 20;

    private StateMigration() {}

    /** Rewrites the values of {@code registered}, whose meta info holds the previous and the new serializer. */
    public static <K, N, SV> void migrate(StateDescriptor<?, SV> desc, RegisteredState registered,
            LetheStateContext<K> context, WindowExpiry window, TtlTimeProvider ttlTimeProvider) throws Exception {
        @SuppressWarnings("unchecked")
        RegisteredKeyValueStateBackendMetaInfo<N, SV> meta =
                (RegisteredKeyValueStateBackendMetaInfo<N, SV>) registered.metaInfo();
        if (desc.getType() == StateDescriptor.Type.MAP) {
            checkMapKeysUnchanged(desc.getName(), meta);
        }
        LOG.info("Migrating the values of state {} to its new serializer.", desc.getName());
        AbstractLetheState<K, N, SV> state = StateFactory.create(desc, registered, context);
        StateExpiry previousExpiry = registered.expiry();
        // TTL may be turned on or off: the new values' delete keys follow the new serializer.
        StateExpiry expiry = StateExpiries.of(desc.getName(), desc.getType(), meta.getStateSerializer(),
                meta.getNamespaceSerializer(), window, previousExpiry.floor());
        // Turning TTL on lowers delete keys from the maximum: a point delete in between keeps the
        // engine's contract (a newer version never has a smaller delete key than an older one).
        boolean lowered = expiry.isTimestamped() && !previousExpiry.isTimestamped();
        registered.replaceExpiry(expiry);
        rewrite(context.db(), registered.columnFamily(), state, meta, expiry, lowered, ttlTimeProvider);
    }

    @SuppressWarnings("unchecked")
    private static <K, N, SV> void rewrite(LetheDb db, ColumnFamilyHandle cf, AbstractLetheState<K, N, SV> state,
            RegisteredKeyValueStateBackendMetaInfo<N, SV> meta, StateExpiry expiry, boolean lowered,
            TtlTimeProvider ttlTimeProvider) throws Exception {
        long now = ttlTimeProvider.currentTimestamp();
        TtlAwareSerializer<SV, ?> previous =
                (TtlAwareSerializer<SV, ?>) TtlAwareSerializer.wrapTtlAwareSerializer(meta.getPreviousStateSerializer());
        TtlAwareSerializer<SV, ?> current =
                (TtlAwareSerializer<SV, ?>) TtlAwareSerializer.wrapTtlAwareSerializer(meta.getStateSerializer());
        DataInputDeserializer in = new DataInputDeserializer();
        DataOutputSerializer out = new DataOutputSerializer(512);
        try (Snapshot snapshot = db.getSnapshot();
                LetheIterator it = db.newIterator(ReadOptions.atSnapshot(snapshot), cf)) {
            WriteBatch batch = new WriteBatch();
            for (it.seekToFirst(); it.isValid(); it.next()) {
                in.setBuffer(it.value());
                state.migrateSerializedValue(in, out, previous, current, ttlTimeProvider);
                byte[] value = out.getCopyOfBuffer();
                if (lowered) {
                    batch.delete(cf, it.key());
                }
                batch.put(cf, it.key(), value, expiry.issueRewrite(it.key(), value, now));
                out.clear();
                if (batch.sizeInBytes() > BATCH_BYTES) {
                    db.write(WriteOptions.NO_WAL, batch);
                    batch.clear();
                }
            }
            db.write(WriteOptions.NO_WAL, batch);
        }
    }

    /** Map state may change its value serializer only: its user keys are part of the engine's keys. */
    @SuppressWarnings("unchecked")
    private static <SV> void checkMapKeysUnchanged(String name, RegisteredKeyValueStateBackendMetaInfo<?, SV> meta)
            throws StateMigrationException {
        TypeSerializerSnapshot<SV> previous = meta.getPreviousStateSerializerSnapshot();
        TypeSerializer<SV> next = meta.getStateSerializer();
        if (!(previous instanceof MapSerializerSnapshot) || !(next instanceof MapSerializer)) {
            throw new StateMigrationException("Map state " + name + " changed its serializer kind");
        }
        TypeSerializerSnapshot<Object> previousKey =
                (TypeSerializerSnapshot<Object>) ((MapSerializerSnapshot<?, ?>) previous).getKeySerializerSnapshot();
        TypeSerializer<Object> nextKey = (TypeSerializer<Object>) ((MapSerializer<?, ?>) next).getKeySerializer();
        if (!nextKey.snapshotConfiguration().resolveSchemaCompatibility(previousKey).isCompatibleAsIs()) {
            throw new StateMigrationException("The new serializer for a MapState requires state migration in order"
                    + " for the job to proceed, since the key schema has changed. However, migration for MapState"
                    + " currently only allows value schema evolutions.");
        }
    }
}
