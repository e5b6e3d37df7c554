package io.lethe.flink.testing;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.flink.runtime.operators.testutils.MockEnvironment;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedStateBackendParametersImpl;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * Keyed backends of integer keys over every key group of one operator, made on one mock
 * environment; closing disposes every backend still held, then the environment.
 */
public final class TestBackends implements AutoCloseable {
    private final MockEnvironment env = MockEnvironment.builder().build();
    private final List<AbstractKeyedStateBackend<Integer>> held = new ArrayList<>();
    private final String operator;
    private final int maxParallelism;

    public TestBackends(String operator, int maxParallelism) {
        this.operator = operator;
        this.maxParallelism = maxParallelism;
    }

    /** A backend of kind, restored from handles (empty: a fresh one), its TTL read from time. */
    @SuppressWarnings("unchecked")
    public AbstractKeyedStateBackend<Integer> create(StateBackend kind, TtlTimeProvider time,
            Collection<KeyedStateHandle> handles) throws Exception {
        AbstractKeyedStateBackend<Integer> b = (AbstractKeyedStateBackend<Integer>) kind.createKeyedStateBackend(
                new KeyedStateBackendParametersImpl<>(env, new JobID(), operator, IntSerializer.INSTANCE,
                        maxParallelism, KeyGroupRange.of(0, maxParallelism - 1), env.getTaskKvStateRegistry(), time,
                        new UnregisteredMetricsGroup(), handles, new CloseableRegistry()));
        held.add(b);
        return b;
    }

    /** Disposes b now, which closing then leaves alone. */
    public void dispose(AbstractKeyedStateBackend<Integer> b) {
        b.dispose();
        held.remove(b);
    }

    @Override
    public void close() throws Exception {
        held.forEach(AbstractKeyedStateBackend::dispose);
        env.close();
    }
}
