package io.lethe.examples;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.serialization.DeserializationSchema;
import org.apache.flink.api.common.serialization.SimpleStringSchema;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.connector.kafka.sink.KafkaRecordSerializationSchema;
import org.apache.flink.connector.kafka.sink.KafkaSink;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.connector.kafka.source.KafkaSourceBuilder;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.ParameterTool;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.function.Function;

/** Clicks from a Kafka topic (text lines {@code id,timestamp,user,page}) and text results into one. */
public final class KafkaIo {
    private KafkaIo() {}

    /**
     * Clicks from {@code topic}, from the earliest offset (a restored job continues from its
     * checkpoint), with watermarks per partition lagging {@link ClickStream#MAX_OUT_OF_ORDERNESS}.
     * Bounded: stops at the offsets that were the latest when the job started.
     */
    public static DataStream<Click> clicks(StreamExecutionEnvironment env, String bootstrapServers, String topic,
            String groupId, boolean bounded) {
        KafkaSourceBuilder<Click> builder = KafkaSource.<Click>builder()
                .setBootstrapServers(bootstrapServers)
                .setTopics(topic)
                .setGroupId(groupId)
                .setStartingOffsets(OffsetsInitializer.earliest())
                .setValueOnlyDeserializer(new ClickSchema())
                // Read only what producers committed (the input may come from a transactional job).
                .setProperty("isolation.level", "read_committed");
        if (bounded) {
            builder.setBounded(OffsetsInitializer.latest());
        }
        return env.fromSource(builder.build(), watermarks(), "clicks from " + topic).uid("clicks-source");
    }

    /**
     * Runs {@code pipeline} on the cluster the job was submitted to: clicks from {@code
     * --input-topic} (clicks) on {@code --bootstrap-servers}, bounded with {@code --bounded}, results
     * exactly once to {@code --output-topic}, or to stdout without one. Checkpointing and the state
     * backend come from the cluster's configuration ({@code examples/conf/config.yaml}).
     */
    static void runOnCluster(ParameterTool params, String name,
            Function<DataStream<Click>, DataStream<String>> pipeline) throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        String servers = params.getRequired("bootstrap-servers");
        DataStream<Click> clicks = clicks(env, servers, params.get("input-topic", "clicks"),
                params.get("group-id", "lethe-" + name), params.has("bounded"));
        DataStream<String> out = pipeline.apply(clicks);
        if (params.has("output-topic")) {
            out.sinkTo(exactlyOnceSink(servers, params.get("output-topic"),
                    params.get("transactional-id-prefix", "lethe-" + name), Duration.ofMinutes(10)))
                    .name("results to Kafka").uid("results-sink");
        } else {
            out.print();
        }
        env.execute("Lethe example: " + name);
    }

    /** Event time from the click, lagging by the stream's largest disorder. */
    public static WatermarkStrategy<Click> watermarks() {
        return WatermarkStrategy.<Click>forBoundedOutOfOrderness(ClickStream.MAX_OUT_OF_ORDERNESS)
                .withTimestampAssigner((c, t) -> c.timestamp);
    }

    /**
     * Writes lines to {@code topic} in Kafka transactions committed with Flink's checkpoints
     * (exactly once: consumers with {@code isolation.level=read_committed} see every line once).
     * Needs checkpointing; the transaction timeout must not exceed the broker's {@code
     * transaction.max.timeout.ms} (15 minutes by default).
     */
    public static KafkaSink<String> exactlyOnceSink(String bootstrapServers, String topic, String transactionalIdPrefix,
            Duration transactionTimeout) {
        return KafkaSink.<String>builder()
                .setBootstrapServers(bootstrapServers)
                .setRecordSerializer(KafkaRecordSerializationSchema.builder()
                        .setTopic(topic)
                        .setValueSerializationSchema(new SimpleStringSchema())
                        .build())
                .setDeliveryGuarantee(DeliveryGuarantee.EXACTLY_ONCE)
                .setTransactionalIdPrefix(transactionalIdPrefix)
                .setProperty("transaction.timeout.ms", Long.toString(transactionTimeout.toMillis()))
                .build();
    }

    /**
     * Parses click lines; a malformed line is counted ({@code badClicks}), logged (the first ten)
     * and skipped rather than failing the job on every restart.
     */
    static final class ClickSchema implements DeserializationSchema<Click> {
        private static final Logger LOG = LoggerFactory.getLogger(ClickSchema.class);
        private transient Counter clicks;
        private transient Counter bad;

        @Override
        public void open(InitializationContext context) {
            clicks = context.getMetricGroup().counter(LocalRun.INPUT_COUNTER);
            bad = context.getMetricGroup().counter("badClicks");
        }

        @Override
        public Click deserialize(byte[] message) {
            String line = message == null ? "" : new String(message, StandardCharsets.UTF_8);
            try {
                Click c = Click.parse(line);
                if (clicks != null) {
                    clicks.inc();
                }
                return c;
            } catch (IllegalArgumentException e) {
                if (bad != null) {
                    bad.inc();
                    if (bad.getCount() <= 10) {
                        LOG.warn("Skipping a malformed click: {}", e.getMessage());
                    }
                }
                return null;
            }
        }

        @Override
        public boolean isEndOfStream(Click next) {
            return false;
        }

        @Override
        public TypeInformation<Click> getProducedType() {
            return TypeInformation.of(Click.class);
        }
    }
}
