package io.lethe.flink.async;

import org.apache.flink.api.common.state.v2.State;
import org.apache.flink.runtime.asyncprocessing.AbstractStateIterator;
import org.apache.flink.runtime.asyncprocessing.StateRequestHandler;
import org.apache.flink.runtime.asyncprocessing.StateRequestType;

import java.util.Collection;

/**
 * A loaded part of a list read or a map iteration, and the payload of the request that loads the
 * next part, or null when this is the last. (Flink shows any iterator that is not an {@link
 * AbstractStateIterator} as empty to the synchronous API of asynchronous state.)
 */
final class LoadedStateIterator<T> extends AbstractStateIterator<T> {
    private final Object rest;

    LoadedStateIterator(State state, StateRequestType type, StateRequestHandler handler, Collection<T> elements,
            Object rest) {
        super(state, type, handler, elements);
        this.rest = rest;
    }

    @Override
    public boolean hasNextLoading() {
        return rest != null;
    }

    @Override
    protected Object nextPayloadForContinuousLoading() {
        if (rest == null) {
            throw new IllegalStateException("A loaded state iterator has nothing more to load");
        }
        return rest;
    }
}
