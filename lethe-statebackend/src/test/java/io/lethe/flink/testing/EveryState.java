package io.lethe.flink.testing;

import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.AggregatingState;
import org.apache.flink.api.common.state.AggregatingStateDescriptor;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ReducingState;
import org.apache.flink.api.common.state.ReducingStateDescriptor;
import org.apache.flink.api.common.state.StateTtlConfig;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple3;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.function.BiConsumerWithException;
import org.apache.flink.util.function.FunctionWithException;
import org.apache.flink.util.function.SupplierWithException;
import org.apache.flink.util.function.ThrowingConsumer;
import org.apache.flink.util.function.ThrowingRunnable;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The keyed process function of {@link AllStatesJob}: per event, every kind of keyed state (value,
 * list, map, reducing, aggregating, and a value with TTL), a timer at the end of each second and a
 * moving reminder timer, deleted while certainly pending.
 *
 * <p>The logic is written once, over the operations it needs ({@link Value}, {@link Appending},
 * {@link Recent}, {@link PerSecond}). {@link Synchronous} binds them to Flink's synchronous state,
 * {@link Asynchronous} to asynchronous state (State V2, through its blocking calls) under the same
 * names and types, so that a savepoint of one restores into the other.
 */
public abstract class EveryState extends KeyedProcessFunction<Integer, Tuple3<Integer, Long, Long>, String> {
    private static final int RECENT = 5;

    // The states' names: one binding's savepoint restores into the other's because they match.
    static final String COUNT = "count";
    static final String TTL_COUNT = "ttl-count";
    static final String REMINDER = "reminder";
    static final String RECENT_VALUES = "recent";
    static final String PER_SECOND = "per-second";
    static final String SUM = "sum";
    static final String COUNT_AND_SUM = "count-and-sum";

    /** A value state. */
    protected record Value(SupplierWithException<Long, Exception> read, ThrowingConsumer<Long, Exception> write,
            ThrowingRunnable<Exception> clear) {}

    /** A reducing or aggregating state. */
    protected record Appending<I, O>(ThrowingConsumer<I, Exception> add, SupplierWithException<O, Exception> read) {}

    /** The list state of recent values. */
    protected record Recent(ThrowingConsumer<Long, Exception> add, SupplierWithException<Iterable<Long>, Exception> read,
            ThrowingConsumer<List<Long>, Exception> replace) {}

    /** The map state of events per second. */
    protected record PerSecond(FunctionWithException<Long, Long, Exception> read,
            BiConsumerWithException<Long, Long, Exception> write, ThrowingConsumer<Long, Exception> remove) {}

    private transient Value count;
    private transient Value ttlCount;
    private transient Value reminder;
    private transient Recent recent;
    private transient PerSecond perSecond;
    private transient Appending<Long, Long> sum;
    private transient Appending<Tuple3<Integer, Long, Long>, String> countAndSum;

    /** The TTL of the value with a TTL: longer than any run, so it never expires in one. */
    static StateTtlConfig ttl() {
        return StateTtlConfig.newBuilder(Duration.ofHours(1)).build();
    }

    /** Called by a binding's {@code open} with its states. */
    protected final void bind(Value count, Value ttlCount, Value reminder, Recent recent, PerSecond perSecond,
            Appending<Long, Long> sum, Appending<Tuple3<Integer, Long, Long>, String> countAndSum) {
        this.count = count;
        this.ttlCount = ttlCount;
        this.reminder = reminder;
        this.recent = recent;
        this.perSecond = perSecond;
        this.sum = sum;
        this.countAndSum = countAndSum;
    }

    @Override
    public void processElement(Tuple3<Integer, Long, Long> e, Context ctx, Collector<String> out) throws Exception {
        long n = increment(count);
        long ttl = increment(ttlCount);
        List<Long> last = keepRecent(e.f2);
        long second = e.f1 / 1000;
        Long inSecond = perSecond.read().apply(second);
        perSecond.write().accept(second, inSecond == null ? 1 : inSecond + 1);
        sum.add().accept(e.f2);
        countAndSum.add().accept(e);
        ctx.timerService().registerEventTimeTimer(second * 1000 + 999);
        moveReminder(e.f1, ctx);
        out.collect("e:" + e.f0 + ":" + n + ":" + ttl + ":" + last + ":" + perSecond.read().apply(second) + ":"
                + sum.read().get() + ":" + countAndSum.read().get());
    }

    @Override
    public void onTimer(long ts, OnTimerContext ctx, Collector<String> out) throws Exception {
        if (ts % 1000 == 999) {
            long second = ts / 1000;
            out.collect("t:" + ctx.getCurrentKey() + ":" + second + ":" + perSecond.read().apply(second));
            perSecond.remove().accept(second);
        } else {
            if (Objects.equals(reminder.read().get(), ts)) {
                reminder.clear().run();
            }
            out.collect("r:" + ctx.getCurrentKey() + ":" + ts);
        }
    }

    private static long increment(Value state) throws Exception {
        Long v = state.read().get();
        long n = v == null ? 1 : v + 1;
        state.write().accept(n);
        return n;
    }

    /** Appends the value and keeps the last few (an append, and a rewrite when too long). */
    private List<Long> keepRecent(long value) throws Exception {
        recent.add().accept(value);
        List<Long> all = new ArrayList<>();
        Iterable<Long> stored = recent.read().get();
        if (stored != null) {
            stored.forEach(all::add);
        }
        if (all.size() > RECENT) {
            all = new ArrayList<>(all.subList(all.size() - RECENT, all.size()));
            recent.replace().accept(all);
        }
        return all;
    }

    /**
     * A reminder two seconds on, at half past (never a second's end, whose timer it would be):
     * the previous one is deleted when it lies after this event's time and so cannot have fired.
     */
    private void moveReminder(long eventTime, Context ctx) throws Exception {
        Long previous = reminder.read().get();
        if (previous != null && previous > eventTime) {
            ctx.timerService().deleteEventTimeTimer(previous);
        }
        long next = (eventTime / 1000 + 2) * 1000 + 500;
        ctx.timerService().registerEventTimeTimer(next);
        reminder.write().accept(next);
    }

    /** The logic on Flink's synchronous state. */
    public static final class Synchronous extends EveryState {
        @Override
        public void open(OpenContext openContext) {
            ValueStateDescriptor<Long> ttl = new ValueStateDescriptor<>(TTL_COUNT, Types.LONG);
            ttl.enableTimeToLive(ttl());
            ListState<Long> recent = getRuntimeContext().getListState(new ListStateDescriptor<>(RECENT_VALUES, Types.LONG));
            MapState<Long, Long> perSecond = getRuntimeContext().getMapState(
                    new MapStateDescriptor<>(PER_SECOND, Types.LONG, Types.LONG));
            ReducingState<Long> sum = getRuntimeContext().getReducingState(
                    new ReducingStateDescriptor<>(SUM, Long::sum, Types.LONG));
            AggregatingState<Tuple3<Integer, Long, Long>, String> countAndSum = getRuntimeContext().getAggregatingState(
                    new AggregatingStateDescriptor<>(COUNT_AND_SUM, new TestJobs.CountAndSum(),
                            PrimitiveArrayTypeInfo.LONG_PRIMITIVE_ARRAY_TYPE_INFO));
            bind(value(new ValueStateDescriptor<>(COUNT, Types.LONG)), value(ttl),
                    value(new ValueStateDescriptor<>(REMINDER, Types.LONG)),
                    new Recent(recent::add, recent::get, recent::update),
                    new PerSecond(perSecond::get, perSecond::put, perSecond::remove),
                    new Appending<>(sum::add, sum::get), new Appending<>(countAndSum::add, countAndSum::get));
        }

        private Value value(ValueStateDescriptor<Long> descriptor) {
            ValueState<Long> state = getRuntimeContext().getState(descriptor);
            return new Value(state::value, state::update, state::clear);
        }
    }

    /** The logic on asynchronous state (State V2), through its blocking calls; enableAsyncState() on the stream. */
    public static final class Asynchronous extends EveryState {
        @Override
        public void open(OpenContext openContext) {
            org.apache.flink.api.common.state.v2.ValueStateDescriptor<Long> ttl =
                    new org.apache.flink.api.common.state.v2.ValueStateDescriptor<>(TTL_COUNT, Types.LONG);
            ttl.enableTimeToLive(ttl());
            org.apache.flink.api.common.state.v2.ListState<Long> recent = getRuntimeContext().getListState(
                    new org.apache.flink.api.common.state.v2.ListStateDescriptor<>(RECENT_VALUES, Types.LONG));
            org.apache.flink.api.common.state.v2.MapState<Long, Long> perSecond = getRuntimeContext().getMapState(
                    new org.apache.flink.api.common.state.v2.MapStateDescriptor<>(PER_SECOND, Types.LONG, Types.LONG));
            org.apache.flink.api.common.state.v2.ReducingState<Long> sum = getRuntimeContext().getReducingState(
                    new org.apache.flink.api.common.state.v2.ReducingStateDescriptor<>(SUM, Long::sum, Types.LONG));
            org.apache.flink.api.common.state.v2.AggregatingState<Tuple3<Integer, Long, Long>, String> countAndSum =
                    getRuntimeContext().getAggregatingState(new org.apache.flink.api.common.state.v2.AggregatingStateDescriptor<>(
                            COUNT_AND_SUM, new TestJobs.CountAndSum(), PrimitiveArrayTypeInfo.LONG_PRIMITIVE_ARRAY_TYPE_INFO));
            bind(value(new org.apache.flink.api.common.state.v2.ValueStateDescriptor<>(COUNT, Types.LONG)), value(ttl),
                    value(new org.apache.flink.api.common.state.v2.ValueStateDescriptor<>(REMINDER, Types.LONG)),
                    new Recent(recent::add, recent::get, recent::update),
                    new PerSecond(perSecond::get, perSecond::put, perSecond::remove),
                    new Appending<>(sum::add, sum::get), new Appending<>(countAndSum::add, countAndSum::get));
        }

        private Value value(org.apache.flink.api.common.state.v2.ValueStateDescriptor<Long> descriptor) {
            org.apache.flink.api.common.state.v2.ValueState<Long> state = getRuntimeContext().getState(descriptor);
            return new Value(state::value, state::update, state::clear);
        }
    }
}
