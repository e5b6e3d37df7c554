package io.lethe.flink.async;

import org.apache.flink.runtime.asyncprocessing.AsyncRequestContainer;
import org.apache.flink.runtime.asyncprocessing.StateRequest;

import java.util.ArrayList;
import java.util.List;

/** The requests of one batch, in the order the operator issued them. Filled and served on the task thread. */
final class RequestBatch implements AsyncRequestContainer<StateRequest<?, ?, ?, ?>> {
    private final List<StateRequest<?, ?, ?, ?>> requests = new ArrayList<>();

    @Override
    public void offer(StateRequest<?, ?, ?, ?> request) {
        requests.add(request);
    }

    @Override
    public boolean isEmpty() {
        return requests.isEmpty();
    }

    List<StateRequest<?, ?, ?, ?>> requests() {
        return requests;
    }
}
