package io.lethe.bench.jobs;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.Table;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.types.Row;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One Nexmark query as a Flink job: the generated events, the query in SQL over them, and its changelog
 * into a {@link NexmarkResultSink}. The SQL options are the Nexmark project's where they change what a
 * state backend does (mini-batches, split distinct aggregation), the same for every backend; state TTL
 * stays unset (state lives forever), async state stays off (Flink's default) unless asked for.
 */
final class NexmarkJob {
    private NexmarkJob() {}

    /**
     * The SQL options of a run. Mini-batches on, as the Nexmark project runs its queries (they fold the
     * changes to one key within a batch into one state access); {@code
     * -Dlethe.bench.nexmark.mini-batch=false} turns them off. {@code asyncPlan}: the plan asynchronous
     * state needs, which Flink allows only without mini-batches and with one-phase aggregation; every
     * run of the asynchronous part uses it, so that all run the same operators. {@code asyncState}: the
     * operators that have asynchronous versions use them.
     */
    static Map<String, String> sqlOptions(boolean asyncPlan, boolean asyncState) {
        Map<String, String> options = new LinkedHashMap<>();
        boolean miniBatch = !asyncPlan
                && Boolean.parseBoolean(System.getProperty("lethe.bench.nexmark.mini-batch", "true"));
        options.put("table.exec.mini-batch.enabled", Boolean.toString(miniBatch));
        if (miniBatch) {
            options.put("table.exec.mini-batch.allow-latency", "2 s");
            options.put("table.exec.mini-batch.size", "50000");
        }
        if (asyncPlan) {
            options.put("table.exec.async-state.enabled", Boolean.toString(asyncState));
            options.put("table.optimizer.agg-phase-strategy", "ONE_PHASE");
        }
        options.put("table.optimizer.distinct-agg.split.enabled", "true");
        options.put("table.local-time-zone", "UTC");
        return options;
    }

    /**
     * Adds the query's pipeline to {@code env}: planning happens here, before the job is submitted.
     * {@code paced}: the source keeps to the rate of event time and the sink measures latency.
     */
    static void build(StreamExecutionEnvironment env, NexmarkQueries.Query query, NexmarkGenerator generator,
            long events, boolean asyncPlan, boolean asyncState, boolean paced) {
        EnvironmentSettings settings = EnvironmentSettings.newInstance().inStreamingMode()
                .withConfiguration(Configuration.fromMap(sqlOptions(asyncPlan, asyncState))).build();
        StreamTableEnvironment tables = StreamTableEnvironment.create(env, settings);
        NexmarkSource.register(tables, NexmarkSource.events(env, generator, events, paced));
        Table result = tables.sqlQuery(query.sql());
        DataStream<Row> changes = tables.toChangelogStream(result);
        NexmarkLatency latency = paced ? NexmarkLatency.of(result.getResolvedSchema().getColumnNames(),
                generator.config().baseTimeMillis()) : null;
        changes.addSink(new NexmarkResultSink(latency)).name("result").setParallelism(1);
    }
}
