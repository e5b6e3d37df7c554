package io.lethe.flink.async;

import org.apache.flink.runtime.asyncprocessing.StateRequest;

/** Completes a state request's future: with its result, or failed, which fails the task. */
final class RequestOutcome {
    /** The outcome of a request that failed: it fails with the cause. */
    record Failure(Exception cause) {}

    private RequestOutcome() {}

    /** Completes {@code request} with {@code outcome}: failed if it is a {@link Failure}, with it as the result otherwise. */
    static void settle(StateRequest<?, ?, ?, ?> request, Object outcome) {
        if (outcome instanceof Failure failure) {
            fail(request, failure.cause());
        } else {
            complete(request, outcome);
        }
    }

    @SuppressWarnings("unchecked")
    static void complete(StateRequest<?, ?, ?, ?> request, Object result) {
        ((StateRequest<?, ?, ?, Object>) request).getFuture().complete(result);
    }

    static void fail(StateRequest<?, ?, ?, ?> request, Throwable cause) {
        request.getFuture().completeExceptionally(
                "Lethe could not serve a " + request.getRequestType() + " state request", cause);
    }
}
