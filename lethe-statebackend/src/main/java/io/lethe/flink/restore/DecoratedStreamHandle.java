package io.lethe.flink.restore;

import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.runtime.state.PhysicalStateHandleID;
import org.apache.flink.runtime.state.StreamStateHandle;

import java.io.IOException;
import java.io.Serializable;
import java.util.Optional;

/**
 * A stream handle whose streams are another handle's, each wrapped by a decorator; everything else
 * is the other handle's own. A restore reads a canonical snapshot through it with a
 * {@link BufferedSeekableInput}.
 *
 * <p>Immutable; serializable as the handle and the decorator it holds are.
 */
final class DecoratedStreamHandle implements StreamStateHandle {
    private static final long serialVersionUID = 1L;

    /** Wraps a stream just opened; the handle closes the stream when this throws. */
    @FunctionalInterface
    interface Decorator extends Serializable {
        FSDataInputStream decorate(FSDataInputStream in) throws IOException;
    }

    private final StreamStateHandle handle;
    private final Decorator decorator;

    DecoratedStreamHandle(StreamStateHandle handle, Decorator decorator) {
        this.handle = handle;
        this.decorator = decorator;
    }

    @Override
    public FSDataInputStream openInputStream() throws IOException {
        FSDataInputStream in = handle.openInputStream();
        try {
            return decorator.decorate(in);
        } catch (IOException | RuntimeException e) {
            in.close();
            throw e;
        }
    }

    @Override
    public Optional<byte[]> asBytesIfInMemory() {
        return handle.asBytesIfInMemory();
    }

    @Override
    public Optional<org.apache.flink.core.fs.Path> maybeGetPath() {
        return handle.maybeGetPath();
    }

    @Override
    public PhysicalStateHandleID getStreamStateHandleID() {
        return handle.getStreamStateHandleID();
    }

    @Override
    public void discardState() throws Exception {
        handle.discardState();
    }

    @Override
    public long getStateSize() {
        return handle.getStateSize();
    }

    @Override
    public void collectSizeStats(StateObjectSizeStatsCollector collector) {
        handle.collectSizeStats(collector);
    }
}
