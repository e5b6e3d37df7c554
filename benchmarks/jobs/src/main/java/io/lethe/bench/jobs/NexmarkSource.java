package io.lethe.bench.jobs;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.connector.datagen.source.GeneratorFunction;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.Table;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.types.Row;

/**
 * The Nexmark input of a job: events 0 to {@code events} - 1 as fast as the job takes them, or paced at
 * the rate of event time (a bounded {@link DataGeneratorSource}, parallelism 1), passed through a {@link
 * SteadyProbe}, and exposed to SQL as the table {@code nexmark} with the views {@code person}, {@code
 * auction} and {@code bid} ({@link NexmarkQueries#VIEWS}).
 */
final class NexmarkSource {
    private NexmarkSource() {}

    /**
     * The event stream; watermarks come from the table's schema ({@link NexmarkRows#schema}), not from here.
     * {@code paced}: at the generator's rate of event time, so that an event leaves the source when its
     * event time says ({@link NexmarkLatency}).
     */
    static DataStream<Row> events(StreamExecutionEnvironment env, NexmarkGenerator generator, long events,
            boolean paced) {
        Events make = new Events(generator);
        DataGeneratorSource<Row> source = paced ? new DataGeneratorSource<>(make, events,
                RateLimiterStrategy.perSecond(generator.config().eventsPerSecond()), NexmarkRows.TYPE)
                : new DataGeneratorSource<>(make, events, NexmarkRows.TYPE);
        return env.fromSource(source, WatermarkStrategy.noWatermarks(), "nexmark").setParallelism(1)
                .map(new SteadyProbe<Row>(events)).returns(NexmarkRows.TYPE).name("probe").setParallelism(1);
    }

    /** Registers {@code events} as the table {@code nexmark} and the views the queries read. */
    static void register(StreamTableEnvironment tables, DataStream<Row> events) {
        Table nexmark = tables.fromDataStream(events, NexmarkRows.schema());
        tables.createTemporaryView("nexmark", nexmark);
        for (String view : NexmarkQueries.VIEWS) {
            tables.executeSql(view);
        }
    }

    /** Event number i as a row. */
    static final class Events implements GeneratorFunction<Long, Row> {
        private final NexmarkGenerator generator;

        Events(NexmarkGenerator generator) {
            this.generator = generator;
        }

        @Override
        public Row map(Long i) {
            if (i == 0) {
                NexmarkLatency.firstEmitted();
            }
            return NexmarkRows.toRow(generator.event(i));
        }
    }
}
