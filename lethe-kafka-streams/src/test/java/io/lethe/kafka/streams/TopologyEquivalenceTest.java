package io.lethe.kafka.streams;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.kstream.EmitStrategy;
import org.apache.kafka.streams.kstream.JoinWindows;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.SessionWindows;
import org.apache.kafka.streams.kstream.SlidingWindows;
import org.apache.kafka.streams.kstream.Suppressed;
import org.apache.kafka.streams.kstream.TimeWindows;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.state.BuiltInDslStoreSuppliers;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.SessionStore;
import org.apache.kafka.streams.state.ValueAndTimestamp;
import org.apache.kafka.streams.state.WindowStore;
import org.apache.kafka.streams.state.internals.WrappedStateStore;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.Random;
import java.util.TreeSet;
import java.util.function.Consumer;
import java.util.stream.Stream;

/**
 * DSL topologies run on Lethe's stores (switched by {@code dsl.store.suppliers.class} alone, or one
 * operator by its supplier) give exactly the output of the same topology on Kafka Streams' RocksDB
 * stores, and their stores answer interactive queries alike, for random input with out-of-order and
 * late records.
 */
class TopologyEquivalenceTest {
    private static final Duration GRACE = Duration.ofMillis(300);

    @TempDir(factory = MemoryTempDirs.class)
    Path dir;

    static Stream<Arguments> topologies() {
        return Stream.of(
                Arguments.of("tumbling count, suppressed until the window closes", (Consumer<StreamsBuilder>) b ->
                        input(b).groupByKey()
                                .windowedBy(TimeWindows.ofSizeAndGrace(Duration.ofMillis(500), GRACE))
                                .count(Materialized.<String, Long, WindowStore<Bytes, byte[]>>as("windows")
                                        .withKeySerde(Serdes.String()).withValueSerde(Serdes.Long()))
                                .suppress(Suppressed.untilWindowCloses(Suppressed.BufferConfig.unbounded()))
                                .toStream((w, v) -> w.key() + "@" + w.window().start())
                                .mapValues(String::valueOf).to("out")),
                Arguments.of("hopping sum", (Consumer<StreamsBuilder>) b ->
                        input(b).groupByKey()
                                .windowedBy(TimeWindows.ofSizeAndGrace(Duration.ofMillis(800), GRACE)
                                        .advanceBy(Duration.ofMillis(200)))
                                .aggregate(() -> "0", (k, v, agg) -> String.valueOf(Long.parseLong(agg) + v.length()),
                                        Materialized.as("windows"))
                                .toStream((w, v) -> w.key() + "@" + w.window().start()).to("out")),
                Arguments.of("sliding count", (Consumer<StreamsBuilder>) b ->
                        input(b).groupByKey()
                                .windowedBy(SlidingWindows.ofTimeDifferenceAndGrace(Duration.ofMillis(400), GRACE))
                                .count(Materialized.as("windows"))
                                .toStream((w, v) -> w.key() + "@" + w.window().start())
                                .mapValues(String::valueOf).to("out")),
                Arguments.of("tumbling count emitted when the window closes", (Consumer<StreamsBuilder>) b ->
                        input(b).groupByKey()
                                .windowedBy(TimeWindows.ofSizeAndGrace(Duration.ofMillis(500), GRACE))
                                .emitStrategy(EmitStrategy.onWindowClose())
                                .count(Materialized.as("windows"))
                                .toStream((w, v) -> w.key() + "@" + w.window().start())
                                .mapValues(String::valueOf).to("out")),
                Arguments.of("session concatenation", (Consumer<StreamsBuilder>) b ->
                        input(b).groupByKey()
                                .windowedBy(SessionWindows.ofInactivityGapAndGrace(Duration.ofMillis(150), GRACE))
                                .reduce((a, c) -> a + "," + c, Materialized.as("sessions"))
                                .toStream((w, v) -> w.key() + "@" + w.window().start() + "-" + w.window().end())
                                .to("out")),
                Arguments.of("stream-stream join", (Consumer<StreamsBuilder>) b -> {
                    KStream<String, String> in = input(b);
                    KStream<String, String> odd = in.filter((k, v) -> Long.parseLong(v) % 2 == 1);
                    in.filter((k, v) -> Long.parseLong(v) % 2 == 0)
                            .join(odd, (l, r) -> l + "+" + r,
                                    JoinWindows.ofTimeDifferenceAndGrace(Duration.ofMillis(100), GRACE))
                            .to("out");
                }),
                Arguments.of("table aggregation, table-table and stream-table joins", (Consumer<StreamsBuilder>) b -> {
                    KStream<String, String> in = input(b);
                    KTable<String, String> last = in.toTable(Materialized.as("last"));
                    KTable<String, String> sums = in.groupByKey().aggregate(() -> "0",
                            (k, v, agg) -> String.valueOf(Long.parseLong(agg) + Long.parseLong(v)),
                            Materialized.as("sums"));
                    last.join(sums, (l, s) -> l + "/" + s).toStream().to("out");
                    in.mapValues(v -> "again").join(sums, (v, s) -> "seen " + s).to("out");
                }));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("topologies")
    void givesTheOutputOfRocksDbStores(String name, Consumer<StreamsBuilder> topology) {
        for (long seed = 1; seed <= 2; seed++) {
            List<TestRecord<String, String>> input = randomInput(seed);
            Result rocks = run(topology, input, false, "rocksdb-" + seed);
            Result lethe = run(topology, input, true, "lethe-" + seed);
            assertFalse(rocks.output().isEmpty(), name + ": the topology produced nothing");
            assertEquals(rocks.output(), lethe.output(), name + ", seed " + seed + ": output");
            assertEquals(rocks.stores(), lethe.stores(), name + ", seed " + seed + ": interactive queries");
        }
    }

    /**
     * One operator on Lethe by its supplier ({@code Materialized.as(LetheStores...)}), with every other
     * store on the default RocksDB stores: the store lives in Lethe's directory, and output and queries
     * equal those of the operator on a RocksDB store.
     */
    @Test
    void aSupplierPutsOneOperatorOnLethe() {
        Duration size = Duration.ofMillis(500);
        Consumer<StreamsBuilder> onLethe = b -> windowCount(b, Materialized.<String, Long>as(
                LetheStores.persistentTimestampedWindowStore("windows", size.plus(GRACE), size, false)));
        Consumer<StreamsBuilder> onRocksDb = b -> windowCount(b, Materialized.as("windows"));
        List<TestRecord<String, String>> input = randomInput(3);
        Result rocks = run(onRocksDb, input, false, "rocksdb-3");
        Result lethe = run(onLethe, input, false, "supplier-3");
        assertFalse(rocks.output().isEmpty());
        assertEquals(rocks.output(), lethe.output());
        assertEquals(rocks.stores(), lethe.stores());
        assertEquals(List.of("windows: LetheTimestampedWindowStore"), lethe.kinds());
        assertEquals(List.of("windows: RocksDBTimestampedSegmentedBytesStore"), rocks.kinds());
    }

    private static void windowCount(StreamsBuilder b, Materialized<String, Long, WindowStore<Bytes, byte[]>> store) {
        input(b).groupByKey()
                .windowedBy(TimeWindows.ofSizeAndGrace(Duration.ofMillis(500), GRACE))
                .count(store.withKeySerde(Serdes.String()).withValueSerde(Serdes.Long()))
                .toStream((w, v) -> w.key() + "@" + w.window().start())
                .mapValues(String::valueOf).to("out");
    }

    private static KStream<String, String> input(StreamsBuilder b) {
        return b.stream("in");
    }

    /** Records of ten keys, time moving on by up to 60 ms; one in six is out of order, some too late. */
    private static List<TestRecord<String, String>> randomInput(long seed) {
        Random rnd = new Random(seed);
        List<TestRecord<String, String>> records = new ArrayList<>();
        long time = 1_000;
        for (int i = 0; i < 500; i++) {
            time += rnd.nextInt(60);
            long ts = rnd.nextInt(6) == 0 ? Math.max(0, time - rnd.nextInt(700)) : time;
            records.add(new TestRecord<>("k" + rnd.nextInt(10), String.valueOf(rnd.nextInt(1000)), null,
                    Instant.ofEpochMilli(ts)));
        }
        return records;
    }

    /** What a run output, what its stores held, and what each store is underneath Kafka's layers. */
    private record Result(List<String> output, List<String> stores, List<String> kinds) {}

    private Result run(Consumer<StreamsBuilder> topology, List<TestRecord<String, String>> input, boolean lethe,
                       String stateDir) {
        StreamsBuilder builder = new StreamsBuilder();
        topology.accept(builder);
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, "equivalence");
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        props.put(StreamsConfig.STATE_DIR_CONFIG, dir.resolve(stateDir).toString());
        props.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        props.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        props.put(StreamsConfig.DSL_STORE_SUPPLIERS_CLASS_CONFIG,
                lethe ? LetheDslStoreSuppliers.class : BuiltInDslStoreSuppliers.RocksDBDslStoreSuppliers.class);
        try (TopologyTestDriver driver = new TopologyTestDriver(builder.build(), props)) {
            TestInputTopic<String, String> in = driver.createInputTopic("in", Serdes.String().serializer(),
                    Serdes.String().serializer());
            TestOutputTopic<String, String> out = driver.createOutputTopic("out", Serdes.String().deserializer(),
                    Serdes.String().deserializer());
            List<String> output = new ArrayList<>();
            for (TestRecord<String, String> record : input) {
                in.pipeInput(record);
                out.readRecordsToList().forEach(r -> output.add(r.key() + "=" + r.value() + "@" + r.timestamp()));
            }
            return new Result(output, queryStores(driver), storeKinds(driver));
        }
    }

    /** Every store's innermost class, under Kafka Streams' metered, caching and logging layers. */
    private static List<String> storeKinds(TopologyTestDriver driver) {
        List<String> kinds = new ArrayList<>();
        driver.getAllStateStores().forEach((name, store) -> {
            StateStore inner = store;
            while (inner instanceof WrappedStateStore<?, ?, ?> wrapped) {
                inner = wrapped.wrapped();
            }
            kinds.add(name + ": " + inner.getClass().getSimpleName());
        });
        kinds.sort(null);
        return kinds;
    }

    /** Every store's contents through interactive queries, in a fixed order. */
    @SuppressWarnings("unchecked")
    private static List<String> queryStores(TopologyTestDriver driver) {
        List<String> stores = new ArrayList<>();
        for (var entry : driver.getAllStateStores().entrySet()) {
            TreeSet<String> contents = new TreeSet<>();
            Object store = entry.getValue();
            if (store instanceof WindowStore<?, ?> w) {
                try (KeyValueIterator<? extends Windowed<?>, ?> it = ((WindowStore<Object, ?>) w).all()) {
                    it.forEachRemaining(kv -> contents.add(kv.key + "=" + plain(kv.value)));
                }
            } else if (store instanceof SessionStore<?, ?> s) {
                for (int k = 0; k < 10; k++) {
                    try (KeyValueIterator<Windowed<Object>, ?> it = ((SessionStore<Object, ?>) s).fetch("k" + k)) {
                        it.forEachRemaining(kv -> contents.add(kv.key + "=" + plain(kv.value)));
                    }
                }
            } else if (store instanceof KeyValueStore<?, ?> kvs) {
                try (KeyValueIterator<?, ?> it = kvs.all()) {
                    it.forEachRemaining(kv -> contents.add(kv.key + "=" + plain(kv.value)));
                }
            }
            stores.add(entry.getKey() + ": " + contents);
        }
        stores.sort(null);
        return stores;
    }

    private static String plain(Object value) {
        if (value instanceof ValueAndTimestamp<?> vt) {
            return vt.value() + "@" + vt.timestamp();
        }
        return value instanceof byte[] bytes ? Bytes.wrap(bytes).toString() : String.valueOf(value);
    }
}
