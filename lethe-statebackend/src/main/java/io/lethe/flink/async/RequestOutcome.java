package io.lethe.flink.async;

import org.apache.flink.runtime.asyncprocessing.StateRequest;

/** Completes a state request's future: with its result, or failed, which fails the task. */
final class RequestOutcome {
    private RequestOutcome() {}

    @SuppressWarnings("unchecked")
    static void complete(StateRequest<?, ?, ?, ?> request, Object result) {
        ((StateRequest<?, ?, ?, Object>) request).getFuture().complete(result);
    }

    static void fail(StateRequest<?, ?, ?, ?> request, Throwable cause) {
        request.getFuture().completeExceptionally(
                "Lethe could not serve a " + request.getRequestType() + " state request", cause);
    }
}
