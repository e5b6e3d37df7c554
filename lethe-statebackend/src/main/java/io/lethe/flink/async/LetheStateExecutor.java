package io.lethe.flink.async;

import org.apache.flink.runtime.asyncprocessing.AsyncRequestContainer;
import org.apache.flink.runtime.asyncprocessing.StateExecutor;
import org.apache.flink.runtime.asyncprocessing.StateRequest;

import java.util.concurrent.CompletableFuture;

/**
 * Serves the state requests of one operator: a batch in the order the operator issued it, on the
 * task thread, each request's future completed with its result (Flink runs the callbacks in the
 * task's mailbox) or failed, which fails the task. Nothing is ever left in flight, so the executor
 * is never fully loaded.
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
        for (StateRequest<?, ?, ?, ?> request : ((RequestBatch) container).requests()) {
            serve(request);
        }
        return CompletableFuture.completedFuture(null);
    }

    @Override
    public AsyncRequestContainer<StateRequest<?, ?, ?, ?>> createRequestContainer() {
        return new RequestBatch();
    }

    @Override
    public void executeRequestSync(StateRequest<?, ?, ?, ?> request) {
        checkRunning();
        serve(request);
    }

    @Override
    public boolean fullyLoaded() {
        return false;
    }

    @Override
    public void shutdown() {
        shutDown = true;
    }

    @SuppressWarnings("unchecked")
    private void serve(StateRequest<?, ?, ?, ?> request) {
        Object result;
        try {
            result = server.serve(request);
        } catch (Exception e) {
            request.getFuture().completeExceptionally(
                    "Lethe could not serve a " + request.getRequestType() + " state request", e);
            return;
        }
        ((StateRequest<?, ?, ?, Object>) request).getFuture().complete(result);
    }

    private void checkRunning() {
        if (shutDown) {
            throw new IllegalStateException("The Lethe state executor was shut down");
        }
    }
}
