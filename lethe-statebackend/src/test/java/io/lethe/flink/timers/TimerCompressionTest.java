package io.lethe.flink.timers;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.lethe.engine.Compression;
import io.lethe.engine.LetheDb;
import io.lethe.flink.LetheKeyedStateBackend;
import io.lethe.flink.LetheOptions;
import io.lethe.flink.LetheStateBackend;
import io.lethe.flink.testing.TestBackends;
import io.lethe.flink.testing.TestCheckpoints;

import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;
import org.apache.flink.streaming.api.operators.TimerHeapInternalTimer;
import org.apache.flink.streaming.api.operators.TimerSerializer;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Collection;
import java.util.List;

/**
 * Timer queues kept in the engine take their own compression (ZSTD on every level by default), while
 * the state's column families keep theirs; a restored queue keeps what it was created with.
 */
class TimerCompressionTest {
    private static final int MAX_PARALLELISM = 128;
    private static final String QUEUE = "_timer_state/event_user-timers";
    private static final TimerSerializer<Integer, VoidNamespace> SERIALIZER =
            new TimerSerializer<>(IntSerializer.INSTANCE, VoidNamespaceSerializer.INSTANCE);

    @TempDir
    Path dir;

    private TestBackends backends;

    @BeforeEach
    void setUp() {
        backends = new TestBackends("compression-test", MAX_PARALLELISM);
    }

    @AfterEach
    void tearDown() throws Exception {
        backends.close();
    }

    /** A backend with a timer queue holding a timer and a value state, both opened. */
    private LetheKeyedStateBackend<Integer> backend(LetheStateBackend lethe, Collection<KeyedStateHandle> handles)
            throws Exception {
        AbstractKeyedStateBackend<Integer> b = backends.create(lethe, TtlTimeProvider.DEFAULT, handles);
        b.create(QUEUE, SERIALIZER).add(new TimerHeapInternalTimer<>(10, 1, VoidNamespace.INSTANCE));
        b.setCurrentKey(1);
        b.getPartitionedState(VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE,
                new ValueStateDescriptor<>("plain", Integer.class)).update(1);
        return (LetheKeyedStateBackend<Integer>) b;
    }

    private static LetheStateBackend lethe() {
        return new LetheStateBackend().with(LetheOptions.USE_MANAGED_MEMORY, false);
    }

    private static String compression(LetheKeyedStateBackend<Integer> b, String columnFamily) {
        LetheDb db = b.db();
        return db.property(db.columnFamily(columnFamily), "lethe.compression");
    }

    @Test
    void timerQueuesTakeZstdOnEveryLevelByDefault() throws Exception {
        LetheKeyedStateBackend<Integer> b = backend(lethe(), List.of());
        assertEquals("zstd,zstd", compression(b, QUEUE));
        assertEquals("lz4,zstd", compression(b, "plain"), "the state's own defaults");
    }

    @Test
    void timerCompressionIsItsOwnOption() throws Exception {
        LetheKeyedStateBackend<Integer> b = backend(lethe()
                .with(LetheOptions.TIMER_SERVICE_COMPRESSION, Compression.NONE)
                .with(LetheOptions.COMPRESSION, Compression.ZSTD), List.of());
        assertEquals("none,none", compression(b, QUEUE));
        assertEquals("zstd,zstd", compression(b, "plain"));
    }

    @Test
    void aRestoredQueueKeepsTheCompressionItWasCreatedWith() throws Exception {
        LetheKeyedStateBackend<Integer> first = backend(lethe(), List.of());
        KeyedStateHandle checkpoint = new TestCheckpoints(dir).take(first, 1);
        LetheKeyedStateBackend<Integer> restored = backend(
                lethe().with(LetheOptions.TIMER_SERVICE_COMPRESSION, Compression.LZ4), List.of(checkpoint));
        assertEquals("zstd,zstd", compression(restored, QUEUE));
    }
}
