package io.lethe.flink.async;

import org.apache.flink.api.common.state.v2.State;
import org.apache.flink.runtime.asyncprocessing.AbstractStateIterator;
import org.apache.flink.runtime.asyncprocessing.StateRequestHandler;
import org.apache.flink.runtime.asyncprocessing.StateRequestType;

import java.util.Collection;

/**
 * The whole result of a list read or a map iteration, read in one request: there is nothing more
 * to load. (Flink shows any iterator that is not an {@link AbstractStateIterator} as empty to the
 * synchronous API of asynchronous state.)
 */
final class LoadedStateIterator<T> extends AbstractStateIterator<T> {

    LoadedStateIterator(State state, StateRequestType type, StateRequestHandler handler, Collection<T> elements) {
        super(state, type, handler, elements);
    }

    @Override
    public boolean hasNextLoading() {
        return false;
    }

    @Override
    protected Object nextPayloadForContinuousLoading() {
        throw new IllegalStateException("A loaded state iterator has nothing more to load");
    }
}
