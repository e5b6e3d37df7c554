package io.lethe.flink.testing;

import org.apache.flink.runtime.state.ttl.TtlTimeProvider;

/** A TTL clock that tests move by hand; read by the backend's expiry thread too. */
public final class TtlClock implements TtlTimeProvider {
    public volatile long now = 1_000_000;

    @Override
    public long currentTimestamp() {
        return now;
    }
}
