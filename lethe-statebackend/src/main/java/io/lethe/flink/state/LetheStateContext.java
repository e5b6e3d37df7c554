package io.lethe.flink.state;

import io.lethe.engine.LetheDb;

import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.runtime.state.SerializedCompositeKeyBuilder;

/**
 * What a keyed state needs of its backend: the engine, the key layout and the builder that holds
 * the current key. The keyed backend implements it; states know nothing else of the backend.
 */
public interface LetheStateContext<K> {
    LetheDb db();

    /** Holds the current key and key group; states append namespaces and user keys to it. */
    SerializedCompositeKeyBuilder<K> sharedKeyBuilder();

    TypeSerializer<K> getKeySerializer();

    int getNumberOfKeyGroups();

    /** Bytes of the key-group prefix of every composite key. */
    int keyGroupPrefixBytes();
}
