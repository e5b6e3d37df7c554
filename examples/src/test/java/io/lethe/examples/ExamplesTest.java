package io.lethe.examples;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.flink.util.ParameterTool;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Path;
import java.time.Duration;

/**
 * The example jobs, run locally as their main methods run them but smaller, on Lethe and on the
 * HashMap backend, and the Kafka Streams example on Lethe's stores: each must produce exactly what a
 * plain computation of the same stream gives.
 */
class ExamplesTest {
    private static ParameterTool params(String backend, Path dir, String... more) {
        String[] base = {"--backend", backend, "--work-dir", dir.toString(), "--rate", "0",
                "--checkpoint-interval", "1 s", "--delete-persistence-threshold", "2 s"};
        String[] all = new String[base.length + more.length];
        System.arraycopy(base, 0, all, 0, base.length);
        System.arraycopy(more, 0, all, base.length, more.length);
        return ParameterTool.fromArgs(all);
    }

    @ParameterizedTest
    @ValueSource(strings = {"lethe", "hashmap"})
    void clickWindowsEqualThePlainComputation(String backend, @TempDir Path dir) throws Exception {
        // 300,000 clicks: 30 s of event time, 10 s windows of 100 pages.
        assertTrue(ClickWindows.runLocally(params(backend, dir, "--clicks", "300000", "--pages", "100"),
                Duration.ofSeconds(10)));
    }

    @ParameterizedTest
    @ValueSource(strings = {"lethe", "hashmap"})
    void ttlDedupEqualsThePlainComputation(String backend, @TempDir Path dir) throws Exception {
        assertTrue(TtlDedup.runLocally(params(backend, dir, "--clicks", "200000"), Duration.ofSeconds(30)));
    }

    @Test
    void pageViewStreamsEqualThePlainComputation(@TempDir Path dir) throws Exception {
        // 200,000 clicks keyed by page into 4 partitions: 20 s of event time, 10 s windows of 100 pages.
        assertTrue(StreamsLocalRun.run(ParameterTool.fromArgs(new String[] {"--stores", "lethe", "--work-dir",
                dir.toString(), "--clicks", "200000", "--pages", "100", "--delete-persistence-threshold", "2s"})));
    }
}
