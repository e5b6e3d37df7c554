package io.lethe.flink.restore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lethe.flink.LetheOptions;
import io.lethe.flink.LetheStateBackend;
import io.lethe.flink.testing.TestBackends;
import io.lethe.flink.testing.TestCheckpoints;

import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.KeyGroupsStateHandle;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A restore from a canonical savepoint reads the savepoint's file in large pieces: Flink's reader asks
 * for a few bytes at a time (four single-byte reads for each length), which on a local file is a
 * system call each unless the restore reads through a buffer.
 */
class CanonicalRestoreReadsTest {
    private static final int MAX_PARALLELISM = 128;
    private static final int KEYS = 20_000;
    private static final ValueStateDescriptor<Long> VALUES = new ValueStateDescriptor<>("values", LongSerializer.INSTANCE);

    @TempDir
    Path dir;

    @Test
    void readsTheSavepointInBufferSizedPieces() throws Exception {
        try (TestBackends backends = new TestBackends("restore-reads", MAX_PARALLELISM)) {
            AbstractKeyedStateBackend<Integer> source = backends.create(lethe(), TtlTimeProvider.DEFAULT, List.of());
            ValueState<Long> values = state(source);
            for (int k = 0; k < KEYS; k++) {
                source.setCurrentKey(k);
                values.update(k * 3L + 1);
            }
            KeyGroupsStateHandle savepoint =
                    (KeyGroupsStateHandle) new TestCheckpoints(dir).takeCanonicalSavepoint(source, 1);
            AtomicLong reads = new AtomicLong();
            StreamStateHandle counted = new DecoratedStreamHandle(savepoint.getDelegateStateHandle(),
                    in -> new CountingInput(in, reads));

            AbstractKeyedStateBackend<Integer> restored = backends.create(lethe(), TtlTimeProvider.DEFAULT,
                    List.of(KeyGroupsStateHandle.restore(savepoint.getGroupRangeOffsets(), counted,
                            savepoint.getStateHandleId())));

            ValueState<Long> back = state(restored);
            for (int k = 0; k < KEYS; k++) {
                restored.setCurrentKey(k);
                assertEquals(k * 3L + 1, back.value(), "key " + k);
            }
            long bound = savepoint.getStateSize() / BufferedSeekableInput.RESTORE_BUFFER_BYTES + MAX_PARALLELISM + 10;
            assertTrue(reads.get() <= bound, reads.get() + " reads of a savepoint of "
                    + savepoint.getStateSize() + " bytes with " + KEYS + " entries; at most " + bound + " expected");
        }
    }

    private static StateBackend lethe() {
        return new LetheStateBackend().with(LetheOptions.USE_MANAGED_MEMORY, false);
    }

    private static ValueState<Long> state(AbstractKeyedStateBackend<Integer> backend) throws Exception {
        return backend.getPartitionedState(VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, VALUES);
    }

    /** A stream that counts the read calls it receives. */
    private static final class CountingInput extends FSDataInputStream {
        private final FSDataInputStream in;
        private final AtomicLong reads;

        CountingInput(FSDataInputStream in, AtomicLong reads) {
            this.in = in;
            this.reads = reads;
        }

        @Override
        public void seek(long desired) throws IOException {
            in.seek(desired);
        }

        @Override
        public long getPos() throws IOException {
            return in.getPos();
        }

        @Override
        public int read() throws IOException {
            reads.incrementAndGet();
            return in.read();
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            reads.incrementAndGet();
            return in.read(b, off, len);
        }

        @Override
        public void close() throws IOException {
            in.close();
        }
    }
}
