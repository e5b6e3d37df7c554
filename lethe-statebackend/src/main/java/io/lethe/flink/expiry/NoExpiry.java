package io.lethe.flink.expiry;

import io.lethe.engine.LetheDb;

import org.apache.flink.api.common.state.StateTtlConfig;
import org.apache.flink.api.common.typeutils.TypeSerializer;

import java.util.Collection;

/** A state without TTL timestamps or windows: every entry at the maximum delete key, no horizon. */
final class NoExpiry extends StateExpiry {
    /** Why an operator's windows are not followed (null: the operator has none Lethe knows of). */
    private final String windowsReason;

    NoExpiry(String stateName, long floor, String windowsReason) {
        super(stateName, floor);
        this.windowsReason = windowsReason;
    }

    @Override
    public boolean applyTtlConfig(StateTtlConfig ttl, long horizonPeriodMs) {
        return false;
    }

    @Override
    public boolean isActive() {
        return false;
    }

    @Override
    public String status() {
        return windowsReason == null ? "off: no TTL" : "off: no TTL; " + windowsReason;
    }

    @Override
    public long issuePut(byte[] key, byte[] value) {
        return LetheDb.MAX_DELETE_KEY;
    }

    @Override
    public long issueListElements(byte[] key, Collection<?> elements) {
        return LetheDb.MAX_DELETE_KEY;
    }

    @Override
    public long earlierDataDeleteKey(byte[] key) {
        return LetheDb.MAX_DELETE_KEY;
    }

    @Override
    public long issueRestored(byte[] key, byte[] value, TypeSerializer<?> stateSerializer) {
        return LetheDb.MAX_DELETE_KEY;
    }

    @Override
    public long horizon(long now) {
        return 0;
    }
}
