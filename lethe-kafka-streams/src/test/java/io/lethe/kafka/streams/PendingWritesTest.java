package io.lethe.kafka.streams;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lethe.engine.ColumnFamilyHandle;
import io.lethe.engine.ColumnFamilyOptions;
import io.lethe.engine.LetheDb;
import io.lethe.engine.Ticker;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.ProcessorStateException;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.test.InternalMockProcessorContext;
import org.apache.kafka.test.StreamsTestUtils;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A store's puts reach the engine as one write at the next read, commit or close, or once they fill
 * the buffer; every read, also from another thread, sees every put before it.
 */
class PendingWritesTest {
    private static final long RETENTION = 600_000;

    @TempDir
    Path dir;

    private final List<LetheStateStore> opened = new ArrayList<>();

    @AfterEach
    void close() {
        opened.forEach(LetheStateStore::close);
    }

    @Test
    void putsWaitForTheNextReadWhichSeesThemAll() {
        LetheWindowStore store = window("w");
        for (int i = 0; i < 100; i++) {
            store.put(key(i), value(i), 1_000);
        }
        assertEquals(0, userBytesWritten(store), "nothing written before a read");
        assertArrayEquals(value(7), store.fetch(key(7), 1_000));
        long written = userBytesWritten(store);
        assertTrue(written >= 100 * (value(0).length + key(0).get().length), "all 100 written at the read: " + written);
        store.put(key(7), value(700), 1_000);
        assertArrayEquals(value(700), store.fetch(key(7), 1_000), "the newest put wins");
    }

    @Test
    void aFullBufferIsWrittenWithoutARead() {
        LetheWindowStore store = window("w");
        byte[] big = new byte[1_000];
        int puts = PendingWrites.LIMIT_BYTES / big.length + 10;
        for (int i = 0; i < puts; i++) {
            store.put(key(i), big, 1_000);
        }
        long written = userBytesWritten(store);
        assertTrue(written > PendingWrites.LIMIT_BYTES * 9L / 10 && written < (long) puts * big.length,
                "about the first 256 KiB of batch written, the rest held: " + written);
    }

    @Test
    void aCommitMakesThePutsDurable() {
        LetheWindowStore store = window("w");
        store.put(key(1), value(1), 1_000);
        store.flush();
        store.close();
        opened.remove(store);
        LetheWindowStore again = window("w");
        assertArrayEquals(value(1), again.fetch(key(1), 1_000));
    }

    @Test
    void aReadOnAnotherThreadSeesThePuts() throws Exception {
        LetheKeyValueStore store = keyValue("kv");
        store.put(key(1), value(1));
        store.putAll(List.of(KeyValue.pair(key(2), value(2)), KeyValue.pair(key(3), value(3))));
        List<String> seen = CompletableFuture.supplyAsync(() -> {
            List<String> keys = new ArrayList<>();
            try (KeyValueIterator<Bytes, byte[]> all = store.all()) {
                all.forEachRemaining(kv -> keys.add(new String(kv.key.get(), StandardCharsets.UTF_8)));
            }
            return keys;
        }).get();
        assertEquals(List.of("k1", "k2", "k3"), seen);
        store.put(key(2), null);
        assertEquals(null, CompletableFuture.supplyAsync(() -> store.get(key(2))).get(), "a buffered delete");
    }

    /** A write the engine refuses (here: to a column family dropped meanwhile) fails every read after it. */
    @Test
    void aFailedWriteFailsEveryReadFlushAndCloseAfterIt() throws Exception {
        LetheKeyValueStore store = keyValue("kv");
        LetheDb db = store.store.engine();
        ColumnFamilyHandle doomed = db.createColumnFamily("doomed", ColumnFamilyOptions.DEFAULT);
        store.put(key(1), value(1));
        store.store.buffer(batch -> batch.put(doomed, key(2).get(), value(2)));
        db.dropColumnFamily(doomed);
        assertThrows(ProcessorStateException.class, () -> store.get(key(1)));
        assertThrows(ProcessorStateException.class, () -> store.get(key(1)), "not only the first read");
        assertThrows(ProcessorStateException.class, store::flush);
        opened.remove(store);
        assertThrows(ProcessorStateException.class, store::close);
        assertFalse(store.isOpen(), "closed all the same");
    }

    private LetheWindowStore window(String name) {
        LetheWindowStore store = new LetheWindowStore(name, RETENTION, 60_000, false);
        store.init(context(), store);
        opened.add(store);
        return store;
    }

    private LetheKeyValueStore keyValue(String name) {
        LetheKeyValueStore store = new LetheKeyValueStore(name);
        store.init(context(), store);
        opened.add(store);
        return store;
    }

    private InternalMockProcessorContext<?, ?> context() {
        return new InternalMockProcessorContext<>(dir.toFile(), Serdes.Bytes(), Serdes.ByteArray(),
                new StreamsConfig(StreamsTestUtils.getStreamsConfig()));
    }

    private static long userBytesWritten(LetheStateStore store) {
        return store.store.openedDb().statistics().get(Ticker.USER_BYTES_WRITTEN);
    }

    private static Bytes key(int i) {
        return Bytes.wrap(("k" + i).getBytes(StandardCharsets.UTF_8));
    }

    private static byte[] value(int i) {
        return ("value " + i).getBytes(StandardCharsets.UTF_8);
    }
}
