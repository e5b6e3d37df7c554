package io.lethe.flink.expiry;

import io.lethe.engine.CompactionStyle;
import io.lethe.engine.Statistics;
import io.lethe.engine.Ticker;
import io.lethe.flink.LetheKeyedStateBackend;
import io.lethe.flink.LetheOptions;
import io.lethe.flink.LetheStateBackend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;


import org.apache.flink.api.common.ExecutionConfig;
import org.apache.flink.api.common.functions.AggregateFunction;
import org.apache.flink.api.common.typeinfo.BasicTypeInfo;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.checkpoint.SavepointType;
import org.apache.flink.runtime.state.IncrementalKeyedStateHandle;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.functions.windowing.WindowFunction;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.windowing.assigners.EventTimeSessionWindows;
import org.apache.flink.streaming.api.windowing.assigners.SlidingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.assigners.TumblingProcessingTimeWindows;
import org.apache.flink.streaming.api.windowing.assigners.WindowAssigner;
import org.apache.flink.streaming.api.windowing.evictors.CountEvictor;
import org.apache.flink.streaming.api.windowing.triggers.ContinuousEventTimeTrigger;
import org.apache.flink.streaming.api.windowing.triggers.CountTrigger;
import org.apache.flink.streaming.api.windowing.triggers.EventTimeTrigger;
import org.apache.flink.streaming.api.windowing.triggers.ProcessingTimeTrigger;
import org.apache.flink.streaming.api.windowing.triggers.PurgingTrigger;
import org.apache.flink.streaming.api.windowing.triggers.Trigger;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.streaming.runtime.operators.windowing.WindowOperatorBuilder;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.Supplier;

/**
 * Window contents expiring through the horizon, checked against Flink's own {@code WindowOperator}
 * run on the HashMap backend: random scenarios (tumbling, sliding and session windows; allowed
 * lateness 0, positive and unbounded; event-time, purging, continuous and count triggers, an
 * evictor; reduce, aggregate and process functions; out-of-order and late events with a side
 * output; snapshots and restores in the middle; engine flushes, compactions and horizon moves at
 * random points) give the same main and side output, record by record. A physical test checks
 * that expired windows leave the files by page drops, with no tombstone written to disk.
 */
class LetheWindowExpiryTest {
    private static final OutputTag<Tuple2<Integer, Long>> LATE = new OutputTag<>("late", Types.TUPLE(Types.INT, Types.LONG));
    private static final TypeInformation<Tuple2<Integer, Long>> EVENT = Types.TUPLE(Types.INT, Types.LONG);

    /** One random scenario: the operator and the input, the same for both backends. */
    private static final class Scenario {
        final long seed;
        final String description;
        final Supplier<OneInputStreamOperator<Tuple2<Integer, Long>, String>> operator;
        final Boolean expectActive;  // null: either
        final boolean processingTime;  // watermarks advance processing time instead
        final List<Object> steps = new ArrayList<>();  // events, watermarks, "snapshot", "flush", ...

        Scenario(long seed, String description, Supplier<OneInputStreamOperator<Tuple2<Integer, Long>, String>> operator,
                Boolean expectActive, boolean processingTime) {
            this.seed = seed;
            this.description = description;
            this.operator = operator;
            this.expectActive = expectActive;
            this.processingTime = processingTime;
        }
    }

    /** An event: key, timestamp, value; the value is the event's number (outputs name their inputs). */
    private record Event(int key, long ts, long value) {}

    private record Watermark(long ts) {}

    private static Scenario scenario(long seed) {
        Random rnd = new Random(seed);
        long size = 100 + rnd.nextInt(400);
        int kind = rnd.nextInt(4);
        WindowAssigner<Object, TimeWindow> assigner;
        String a;
        if (kind == 0) {
            assigner = TumblingEventTimeWindows.of(Duration.ofMillis(size));
            a = "tumbling " + size;
        } else if (kind == 1) {
            long slide = Math.max(10, size / (2 + rnd.nextInt(3)));
            assigner = SlidingEventTimeWindows.of(Duration.ofMillis(size), Duration.ofMillis(slide));
            a = "sliding " + size + "/" + slide;
        } else if (kind == 2) {
            assigner = EventTimeSessionWindows.withGap(Duration.ofMillis(size / 2));
            a = "session gap " + size / 2;
        } else {
            // The "watermarks" below advance processing time instead.
            assigner = TumblingProcessingTimeWindows.of(Duration.ofMillis(size));
            a = "processing-time tumbling " + size;
        }
        final boolean processingTime = kind == 3;
        // Unbounded lateness overflows Flink's own merge check for session windows: bounded there.
        // Processing-time windows have none.
        int l = processingTime ? 0 : rnd.nextInt(kind == 2 ? 2 : 3);
        long lateness = l == 0 ? 0 : l == 1 ? size / 2 + rnd.nextInt((int) size) : Long.MAX_VALUE;
        int t = rnd.nextInt(kind == 2 ? 3 : 5);  // session windows: triggers that can merge
        Trigger<Object, TimeWindow> trigger;
        String tr;
        switch (processingTime ? 10 + Math.min(t, 2) : t) {
            case 10 -> {
                trigger = ProcessingTimeTrigger.create();
                tr = "processing-time";
            }
            case 11 -> {
                trigger = PurgingTrigger.of(ProcessingTimeTrigger.create());
                tr = "purging processing-time";
            }
            case 12 -> {
                trigger = CountTrigger.of(2);
                tr = "count 2";
            }
            case 0 -> {
                trigger = EventTimeTrigger.create();
                tr = "event-time";
            }
            case 1 -> {
                trigger = PurgingTrigger.of(EventTimeTrigger.create());
                tr = "purging event-time";
            }
            case 2 -> {
                trigger = ContinuousEventTimeTrigger.of(Duration.ofMillis(Math.max(5, size / 3)));
                tr = "continuous";
            }
            case 3 -> {
                trigger = PurgingTrigger.of(CountTrigger.of(3));
                tr = "purging count 3";
            }
            default -> {
                trigger = CountTrigger.of(2);
                tr = "count 2";
            }
        }
        int f = rnd.nextInt(4);
        boolean evict = f == 3;
        String description = a + ", lateness " + (lateness == Long.MAX_VALUE ? "unbounded" : lateness) + ", " + tr
                + ", " + new String[] {"reduce", "aggregate", "process", "evicting process"}[f] + ", seed " + seed;
        Supplier<OneInputStreamOperator<Tuple2<Integer, Long>, String>> operator = () -> {
            @SuppressWarnings({"unchecked", "rawtypes"})
            WindowOperatorBuilder<Tuple2<Integer, Long>, Integer, TimeWindow> b = new WindowOperatorBuilder<>(
                    (WindowAssigner) assigner, (Trigger) trigger, new ExecutionConfig(), EVENT, e -> e.f0,
                    BasicTypeInfo.INT_TYPE_INFO);
            b.allowedLateness(Duration.ofMillis(lateness));
            b.sideOutputLateData(LATE);
            if (evict) {
                b.evictor(CountEvictor.of(4));
            }
            return switch (f) {
                case 0 -> b.reduce((x, y) -> Tuple2.of(x.f0, x.f1 * 31 + y.f1), new Label<>());
                case 1 -> b.aggregate(new Sum(), new Label<Long>(), Types.LONG);
                default -> b.process(new Contents());
            };
        };
        // Off: merging windows. Active: finite lateness. Unbounded lateness (windows never cleaned
        // up): the checks turn it off, except while a purging trigger empties every window anyway.
        Boolean active = kind == 2 ? Boolean.FALSE : lateness != Long.MAX_VALUE ? Boolean.TRUE : null;
        Scenario s = new Scenario(seed, description, operator, active, processingTime);
        // Input: keys in [0, 12), timestamps rising with disorder, now and then an event far behind
        // (late, within or beyond the lateness), watermarks every few events.
        long maxTs = 0;
        long watermark = Long.MIN_VALUE;
        long disorder = size;
        int events = 1500 + rnd.nextInt(1500);
        for (int i = 0; i < events; i++) {
            long ts = maxTs + rnd.nextInt(40) - (rnd.nextInt(10) == 0 ? rnd.nextInt((int) (3 * size)) : 0);
            ts = Math.max(0, ts);
            maxTs = Math.max(maxTs, ts);
            s.steps.add(new Event(rnd.nextInt(12), ts, i));
            if (rnd.nextInt(5) == 0 && maxTs - disorder > watermark) {
                watermark = maxTs - disorder;
                s.steps.add(new Watermark(watermark));
            }
            int r = rnd.nextInt(1000);
            if (r < 4) {
                s.steps.add("snapshot");
            } else if (r < 20) {
                s.steps.add("flush");
            } else if (r < 26) {
                s.steps.add("compact");
            } else if (r < 60) {
                s.steps.add("advance");
            }
        }
        s.steps.add(new Watermark(processingTime ? maxTs + 20 * size : Long.MAX_VALUE));
        s.steps.add("advance");
        return s;
    }

    /** Main output and late side output of one run. */
    private record Output(List<String> main, List<String> late, StateExpiry expiry, Statistics statistics,
            String contentsCompaction) {}

    private static Output run(Scenario s, StateBackend backend) throws Exception {
        List<String> main = new ArrayList<>();
        List<String> late = new ArrayList<>();
        KeyedOneInputStreamOperatorTestHarness<Integer, Tuple2<Integer, Long>, String> h = harness(s, backend, null);
        long checkpoint = 0;
        StateExpiry expiry = null;
        Statistics statistics = null;
        String contentsCompaction = null;
        for (Object step : s.steps) {
            if (step instanceof Event e) {
                h.processElement(new StreamRecord<>(Tuple2.of(e.key(), e.value()), e.ts()));
            } else if (step instanceof Watermark w) {
                if (s.processingTime) {
                    h.setProcessingTime(Math.max(w.ts(), h.getProcessingTime()));
                } else {
                    h.processWatermark(w.ts());
                }
            } else if ("snapshot".equals(step)) {
                OperatorSubtaskState state = h.snapshot(++checkpoint, checkpoint);
                drain(h, main, late);
                h.close();
                h = harness(s, backend, state);
            } else {
                LetheKeyedStateBackend<?> lethe = lethe(h);
                if (lethe == null) {
                    continue;
                }
                switch ((String) step) {
                    case "flush" -> lethe.db().flush();
                    case "compact" -> lethe.db().compactAll();
                    default -> lethe.expiryDriver().advance();
                }
            }
        }
        drain(h, main, late);
        LetheKeyedStateBackend<?> lethe = lethe(h);
        if (lethe != null) {
            expiry = lethe.expiryOf("window-contents");
            lethe.db().waitForBackgroundWork();
            statistics = lethe.db().statistics();
            var contents = lethe.db().columnFamily("window-contents");
            contentsCompaction = contents == null ? null : lethe.db().property(contents, "lethe.compaction-style");
        }
        h.close();
        return new Output(main, late, expiry, statistics, contentsCompaction);
    }

    private static KeyedOneInputStreamOperatorTestHarness<Integer, Tuple2<Integer, Long>, String> harness(Scenario s,
            StateBackend backend, OperatorSubtaskState restore) throws Exception {
        OneInputStreamOperator<Tuple2<Integer, Long>, String> operator = s.operator.get();
        KeyedOneInputStreamOperatorTestHarness<Integer, Tuple2<Integer, Long>, String> h =
                new KeyedOneInputStreamOperatorTestHarness<>(operator, e -> e.f0, BasicTypeInfo.INT_TYPE_INFO);
        h.setStateBackend(backend);
        if (restore == null) {
            h.open();
        } else {
            h.initializeState(restore);
            h.open();
        }
        return h;
    }

    private static LetheKeyedStateBackend<?> lethe(KeyedOneInputStreamOperatorTestHarness<?, ?, ?> h) {
        Object b = h.getOperator().getKeyedStateBackend();
        return b instanceof LetheKeyedStateBackend ? (LetheKeyedStateBackend<?>) b : null;
    }

    private static void drain(KeyedOneInputStreamOperatorTestHarness<Integer, Tuple2<Integer, Long>, String> h,
            List<String> main, List<String> late) {
        for (StreamRecord<? extends String> r : h.extractOutputStreamRecords()) {
            main.add(r.getTimestamp() + " " + r.getValue());
        }
        var side = h.getSideOutput(LATE);
        if (side != null) {
            for (StreamRecord<Tuple2<Integer, Long>> r : side) {
                late.add(r.getTimestamp() + " " + r.getValue());
            }
        }
    }

    private static LetheStateBackend letheBackend() {
        return new LetheStateBackend()
                .with(LetheOptions.USE_MANAGED_MEMORY, false)
                .with(LetheOptions.WRITE_BUFFER_SIZE, org.apache.flink.configuration.MemorySize.parse("256kb"))
                .with(LetheOptions.PAGE_SIZE, org.apache.flink.configuration.MemorySize.parse("1kb"))
                .with(LetheOptions.PAGES_PER_TILE, "4")
                .with(LetheOptions.DELETE_PERSISTENCE_THRESHOLD, Duration.ofSeconds(2));
    }

    @Test
    void randomScenariosGiveTheHashMapBackendsOutput() throws Exception {
        long base = Long.getLong("lethe.window.seed", System.nanoTime());
        int scenarios = Integer.getInteger("lethe.window.scenarios", 24);
        int active = 0;
        for (int i = 0; i < scenarios; i++) {
            Scenario s = scenario(base + i);
            Output expected = run(s, new HashMapStateBackend());
            Output actual = run(s, letheBackend());
            assertTrue(expected.main().size() > 0, "no output: " + s.description);
            System.out.printf("%-90s %s%n", s.description, actual.expiry().status());
            assertSame(expected.late(), actual.late(), "late side output", s);
            assertSame(expected.main(), actual.main(), "output", s);
            String status = actual.expiry().status();
            if (s.expectActive != null) {
                assertEquals(s.expectActive, status.startsWith("active"), status + ": " + s.description);
            }
            if (status.startsWith("active")) {
                active++;
                long horizon = actual.statistics().columnFamilies().stream()
                        .filter(cf -> cf.name().equals("window-contents")).mapToLong(Statistics.ColumnFamily::horizon)
                        .max().orElse(0);
                assertTrue(horizon > 0, "active, but the horizon never moved: " + s.description);
            }
        }
        assertTrue(active >= scenarios / 4, "too few scenarios had window expiry active: " + active);
    }

    /**
     * Equal outputs; on a difference, the first differing record and its neighbours. Compared in
     * sorted order: Flink leaves the order of timers that fire at one timestamp open, and the heap
     * queue and the engine's queue take them in different orders.
     */
    private static void assertSame(List<String> expectedInOrder, List<String> actualInOrder, String what, Scenario s) {
        List<String> expected = expectedInOrder.stream().sorted().toList();
        List<String> actual = actualInOrder.stream().sorted().toList();
        if (expected.equals(actual)) {
            return;
        }
        int i = 0;
        while (i < expected.size() && i < actual.size() && expected.get(i).equals(actual.get(i))) {
            i++;
        }
        int from = Math.max(0, i - 2);
        throw new AssertionError(what + " differs from the HashMap backend's (" + s.description + "): "
                + expected.size() + " vs " + actual.size() + " records; first difference at " + i + ": expected "
                + expected.subList(from, Math.min(expected.size(), i + 3)) + ", got "
                + actual.subList(from, Math.min(actual.size(), i + 3)));
    }

    @Test
    void expiredWindowsLeaveTheFilesByPageDropsWithoutTombstones() throws Exception {
        Scenario s = new Scenario(0, "tumbling 100 ms, 20 keys", () -> {
            WindowOperatorBuilder<Tuple2<Integer, Long>, Integer, TimeWindow> b = new WindowOperatorBuilder<>(
                    TumblingEventTimeWindows.of(Duration.ofMillis(100)), EventTimeTrigger.create(),
                    new ExecutionConfig(), EVENT, e -> e.f0, BasicTypeInfo.INT_TYPE_INFO);
            return b.process(new Contents());
        }, true, false);
        // 40 windows of 20 keys with 25 events each; flushed as they go, so the contents of every
        // window reach the files before the window fires and is cleared.
        for (int w = 0; w < 40; w++) {
            for (int i = 0; i < 500; i++) {
                s.steps.add(new Event(i % 20, w * 100L + i / 5, w * 1000L + i));
            }
            s.steps.add("flush");
            s.steps.add(new Watermark(w * 100L + 99));
            s.steps.add("advance");
        }
        s.steps.add(new Watermark(10_000));
        s.steps.add("advance");
        s.steps.add("flush");  // the last clears are in the memtable: under the horizon, they vanish
        Output out = run(s, letheBackend());
        assertEquals(40 * 20, out.main().size());
        assertTrue(out.expiry().status().startsWith("active"), out.expiry().status());
        assertEquals("time-ordered", out.contentsCompaction(), "window contents are compacted time-ordered");
        Statistics st = out.statistics();
        Statistics.ColumnFamily contents = st.columnFamilies().stream()
                .filter(cf -> cf.name().equals("window-contents")).findFirst().orElseThrow();
        long entries = contents.levels().stream().mapToLong(Statistics.Level::entries).sum();
        long tombstones = contents.tombstones();
        System.out.printf("window-contents after all windows fired: %d entries, %d tombstones, %d bytes in files;"
                + " pages dropped %d (%d bytes), bytes written by flushes %d%n", entries, tombstones,
                contents.totalBytes(), st.get(Ticker.PAGES_DROPPED), st.get(Ticker.PAGE_BYTES_DROPPED),
                st.get(Ticker.BYTES_WRITTEN_FLUSH));
        assertEquals(0, entries, "expired window contents are still in the files");
        assertEquals(0, tombstones, "clears left tombstones in the files");
        assertTrue(st.get(Ticker.PAGES_DROPPED) > 0, "no page was dropped whole");
        // Leveled on request, with the same output.
        Output leveled = run(s, letheBackend().with(LetheOptions.WINDOW_COMPACTION, CompactionStyle.LEVELED));
        assertEquals("leveled", leveled.contentsCompaction());
        assertEquals(out.main(), leveled.main());
    }

    /**
     * Window contents restored from a canonical savepoint carry the maximum delete key, and so do
     * their clears: the restored column family is leveled, where such tombstones leave through
     * ordinary compactions. Restored from a native checkpoint, it stays time-ordered.
     */
    @Test
    void windowContentsRestoredFromACanonicalSavepointAreLeveled() throws Exception {
        Scenario s = tumbling100();
        KeyedOneInputStreamOperatorTestHarness<Integer, Tuple2<Integer, Long>, String> h = harness(s, letheBackend(), null);
        for (int i = 0; i < 200; i++) {
            h.processElement(new StreamRecord<>(Tuple2.of(i % 20, (long) i), i));
        }
        h.processWatermark(99);
        assertEquals("time-ordered", contentsCompaction(h));
        OperatorSubtaskState checkpoint = h.snapshot(1, 1);
        OperatorSubtaskState savepoint = h.snapshotWithLocalState(2, 2,
                SavepointType.savepoint(SavepointFormatType.CANONICAL)).getJobManagerOwnedState();
        h.close();
        for (boolean canonical : new boolean[] {false, true}) {
            h = harness(s, letheBackend(), canonical ? savepoint : checkpoint);
            h.processWatermark(300);  // fires window [100, 200) from the restored contents
            assertEquals(canonical ? "leveled" : "time-ordered", contentsCompaction(h), canonical ? "savepoint" : "checkpoint");
            assertEquals(20, h.extractOutputStreamRecords().size());
            h.close();
        }
    }

    /** Tumbling windows of 100 ms holding every element, fired by event time; no input yet. */
    private static Scenario tumbling100() {
        return new Scenario(0, "tumbling 100 ms, 20 keys", () -> new WindowOperatorBuilder<
                Tuple2<Integer, Long>, Integer, TimeWindow>(TumblingEventTimeWindows.of(Duration.ofMillis(100)),
                EventTimeTrigger.create(), new ExecutionConfig(), EVENT, e -> e.f0, BasicTypeInfo.INT_TYPE_INFO)
                .process(new Contents()), true, false);
    }

    private static String contentsCompaction(KeyedOneInputStreamOperatorTestHarness<?, ?, ?> h) {
        LetheKeyedStateBackend<?> lethe = lethe(h);
        return lethe.db().property(lethe.db().columnFamily("window-contents"), "lethe.compaction-style");
    }

    /**
     * A checkpoint taken right after a watermark fired every window holds no table file. The
     * snapshot moves the horizons first (the expiry driver's period, a twentieth of the 10-minute
     * threshold, does not come round in this test), so its flush drops the clears of the windows;
     * the trigger's removes of the timers that just fired write nothing; and the files holding only
     * window contents and timers, all under their horizons now, are left out of the engine's copy.
     */
    @Test
    void aCheckpointRightAfterEveryWindowFiredHoldsNoTableFile() throws Exception {
        Scenario s = tumbling100();
        StateBackend backend = letheBackend().with(LetheOptions.DELETE_PERSISTENCE_THRESHOLD, Duration.ofMinutes(10));
        KeyedOneInputStreamOperatorTestHarness<Integer, Tuple2<Integer, Long>, String> h = harness(s, backend, null);
        try {
            for (int w = 0; w < 10; w++) {
                for (int i = 0; i < 200; i++) {
                    h.processElement(new StreamRecord<>(Tuple2.of(i % 20, (long) i), w * 100L + i / 2));
                }
                lethe(h).db().flush();  // window contents and timers in the files
            }
            h.processWatermark(Long.MAX_VALUE);
            assertEquals(10 * 20, h.extractOutputStreamRecords().size());
            OperatorSubtaskState state = h.snapshot(1, 1);
            List<String> tables = new ArrayList<>();
            for (KeyedStateHandle handle : state.getManagedKeyedState()) {
                IncrementalRemoteKeyedStateHandle files = (IncrementalRemoteKeyedStateHandle) handle;
                for (IncrementalKeyedStateHandle.HandleAndLocalPath f : files.getSharedState()) {
                    tables.add(f.getLocalPath());
                }
                for (IncrementalKeyedStateHandle.HandleAndLocalPath f : files.getPrivateState()) {
                    tables.add(f.getLocalPath());
                }
            }
            assertTrue(tables.stream().anyMatch(f -> f.startsWith("MANIFEST")), tables.toString());
            assertEquals(List.of(), tables.stream().filter(f -> f.endsWith(".sst")).toList());
        } finally {
            h.close();
        }
    }

    // ---- Window functions: every output names its window, key and inputs.

    private static final class Label<T> implements WindowFunction<T, String, Integer, TimeWindow> {
        @Override
        public void apply(Integer key, TimeWindow window, Iterable<T> input, Collector<String> out) {
            out.collect(key + " " + window + " " + input.iterator().next());
        }
    }

    private static final class Sum implements AggregateFunction<Tuple2<Integer, Long>, Long, Long> {
        @Override
        public Long createAccumulator() {
            return 0L;
        }

        @Override
        public Long add(Tuple2<Integer, Long> value, Long acc) {
            return acc * 7 + value.f1;
        }

        @Override
        public Long getResult(Long acc) {
            return acc;
        }

        @Override
        public Long merge(Long a, Long b) {
            return a * 7 + b;
        }
    }

    private static final class Contents
            extends ProcessWindowFunction<Tuple2<Integer, Long>, String, Integer, TimeWindow> {
        @Override
        public void process(Integer key, Context ctx, Iterable<Tuple2<Integer, Long>> elements, Collector<String> out) {
            StringBuilder b = new StringBuilder().append(key).append(' ').append(ctx.window()).append(' ');
            for (Tuple2<Integer, Long> e : elements) {
                b.append(e.f1).append(',');
            }
            out.collect(b.toString());
        }
    }
}
