package io.lethe.flink.async;

import org.apache.flink.runtime.asyncprocessing.AsyncRequestContainer;
import org.apache.flink.runtime.asyncprocessing.StateExecutor;
import org.apache.flink.runtime.asyncprocessing.StateRequest;

import java.util.concurrent.CompletableFuture;

/**
 * Serves the state requests of one operator: a batch as {@link RequestServer#serveBatch} does (its
 * point reads looked up with one multi-get per column family and its writes of one key written as
 * one write batch, on the task thread or the request pipeline's), each request's future completed
 * with its result (Flink runs the callbacks in the task's mailbox) or failed, which fails the task.
 * Fully loaded while the pipeline has a batch running and another waiting.
 */
final class LetheStateExecutor implements StateExecutor {
    private final RequestServer<?> server;
    private volatile boolean shutDown;

    LetheStateExecutor(RequestServer<?> server) {
        this.server = server;
    }

    @Override
    public CompletableFuture<Void> executeBatchRequests(AsyncRequestContainer<StateRequest<?, ?, ?, ?>> container) {
        checkRunning();
        server.serveBatch(((RequestBatch) container).requests());
        return CompletableFuture.completedFuture(null);
    }

    @Override
    public AsyncRequestContainer<StateRequest<?, ?, ?, ?>> createRequestContainer() {
        return new RequestBatch();
    }

    @Override
    public void executeRequestSync(StateRequest<?, ?, ?, ?> request) {
        checkRunning();
        server.serveOne(request);
    }

    @Override
    public boolean fullyLoaded() {
        return server.fullyLoaded();
    }

    @Override
    public void shutdown() {
        shutDown = true;
    }

    private void checkRunning() {
        if (shutDown) {
            throw new IllegalStateException("The Lethe state executor was shut down");
        }
    }
}
