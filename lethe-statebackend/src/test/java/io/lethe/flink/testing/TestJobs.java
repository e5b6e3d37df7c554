package io.lethe.flink.testing;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.AggregateFunction;
import org.apache.flink.api.java.tuple.Tuple3;

import java.io.File;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/** The input, watermarks and helpers that the MiniCluster job tests share. */
public final class TestJobs {
    public static final int RECORDS = 20_000;
    public static final int USERS = 40;

    private TestJobs() {}

    /** (user, event time ms, value): deterministic, slightly out of order, with idle gaps per user. */
    public static List<Tuple3<Integer, Long, Long>> events() {
        List<Tuple3<Integer, Long, Long>> list = new ArrayList<>(RECORDS);
        for (int i = 0; i < RECORDS; i++) {
            int user = (i * 7) % USERS;
            long ts = i * 5L + (i % 7) * 3L + ((i / 2000) % 2) * 400L * (user % 3);
            list.add(Tuple3.of(user, ts, (long) (i % 97)));
        }
        return list;
    }

    /**
     * Event time from the events' second field, with a bound larger than the data's worst disorder
     * (~820 ms): no element is ever late, so the output does not depend on thread timing.
     */
    public static WatermarkStrategy<Tuple3<Integer, Long, Long>> watermarks() {
        return WatermarkStrategy.<Tuple3<Integer, Long, Long>>forBoundedOutOfOrderness(Duration.ofSeconds(2))
                .withTimestampAssigner((e, t) -> e.f1);
    }

    /** A new directory under the system's temporary directory, for state a MiniCluster's configuration names. */
    public static java.nio.file.Path temporaryDirectory(String prefix) {
        try {
            return java.nio.file.Files.createTempDirectory(prefix);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** The retained checkpoint with the highest id in a job's checkpoint directory. */
    public static File latestCheckpoint(File jobDir) {
        File[] chks = jobDir.listFiles((d, name) -> name.startsWith("chk-") && new File(d, name + "/_metadata").exists());
        assertTrue(chks != null && chks.length > 0, "no retained checkpoint in " + jobDir);
        return Arrays.stream(chks)
                .max(Comparator.comparingInt(f -> Integer.parseInt(f.getName().substring(4))))
                .orElseThrow();
    }

    /** (count, sum) of the values in a window, as "count/sum". */
    public static final class CountAndSum implements AggregateFunction<Tuple3<Integer, Long, Long>, long[], String> {
        @Override
        public long[] createAccumulator() {
            return new long[2];
        }

        @Override
        public long[] add(Tuple3<Integer, Long, Long> value, long[] acc) {
            return new long[] {acc[0] + 1, acc[1] + value.f2};
        }

        @Override
        public String getResult(long[] acc) {
            return acc[0] + "/" + acc[1];
        }

        @Override
        public long[] merge(long[] a, long[] b) {
            return new long[] {a[0] + b[0], a[1] + b[1]};
        }
    }
}
