package io.lethe.flink.async;

import io.lethe.flink.LetheStateBackend;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.state.v2.StateDescriptor;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.flink.runtime.asyncprocessing.EpochManager;
import org.apache.flink.runtime.asyncprocessing.RecordContext;
import org.apache.flink.runtime.asyncprocessing.StateExecutionController;
import org.apache.flink.runtime.asyncprocessing.StateExecutor;
import org.apache.flink.runtime.asyncprocessing.declare.DeclarationManager;
import org.apache.flink.runtime.operators.testutils.MockEnvironment;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedStateBackendParametersImpl;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.IntConsumer;

/**
 * Lethe's asynchronous keyed backend driven as an operator drives it: Flink's execution controller
 * with batches of {@code batchSize} requests, and the framework's failures collected instead of
 * failing a task. Integer keys 0..n-1, one record each. Callbacks run in a mailbox on the test's
 * thread, as on a task thread ({@link QueuedMailbox}), not on the thread that completes a request.
 */
final class AsyncBackendHarness implements AutoCloseable {
    final MockEnvironment env;
    final LetheAsyncKeyedStateBackend<Integer> backend;
    final StateExecutionController<Integer> aec;
    final StateExecutor executor;
    final List<Throwable> failures = Collections.synchronizedList(new ArrayList<>());
    /** The mailbox that runs callbacks on the test's thread. */
    final QueuedMailbox mailbox = new QueuedMailbox();

    AsyncBackendHarness(LetheStateBackend kind, TtlTimeProvider clock, int batchSize) throws Exception {
        this(kind, clock, batchSize, new UnregisteredMetricsGroup());
    }

    AsyncBackendHarness(LetheStateBackend kind, TtlTimeProvider clock, int batchSize, MetricGroup metrics)
            throws Exception {
        env = MockEnvironment.builder().build();
        backend = (LetheAsyncKeyedStateBackend<Integer>) kind.createAsyncKeyedStateBackend(
                new KeyedStateBackendParametersImpl<>(env, new JobID(), "op", IntSerializer.INSTANCE, 128,
                        KeyGroupRange.of(0, 127), env.getTaskKvStateRegistry(), clock, metrics,
                        (name, v) -> {}, Collections.emptyList(), new CloseableRegistry(), 1.0));
        executor = backend.createStateExecutor();
        aec = new StateExecutionController<>(mailbox, (message, e) -> failures.add(e),
                executor, new DeclarationManager(), EpochManager.ParallelMode.SERIAL_BETWEEN_EPOCH,
                128, batchSize, 60_000, 100_000, null, null);
        backend.setup(aec);
    }

    <S> S state(StateDescriptor<?> descriptor) throws Exception {
        return backend.getOrCreateKeyedState(VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, descriptor);
    }

    /** Runs {@code requests} as the record of each key 0..keys-1 in turn, then drains what is in flight. */
    void forEachKey(int keys, IntConsumer requests) throws Exception {
        issueForEachKey(keys, requests);
        aec.drainInflightRecords(0);
    }

    /** As {@link #forEachKey} without draining: requests of a record that fails never finish. */
    void issueForEachKey(int keys, IntConsumer requests) {
        List<RecordContext<Integer>> contexts = new ArrayList<>();
        for (int k = 0; k < keys; k++) {
            RecordContext<Integer> context = aec.buildContext(k, k);
            context.retain();
            aec.setCurrentContext(context);
            requests.accept(k);
            contexts.add(context);
        }
        contexts.forEach(RecordContext::release);
    }

    /** Waits until the backend has served every batch it was given, then runs the callbacks they sent. */
    void awaitServed() throws InterruptedException {
        backend.awaitServed();
        mailbox.runAll();
    }

    @Override
    public void close() throws Exception {
        backend.dispose();
        env.close();
    }
}
