package io.lethe.flink.restore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lethe.flink.testing.AllStatesJob;
import io.lethe.flink.testing.FailOnceAfterCheckpoint;
import io.lethe.flink.testing.TestJobs;

import org.apache.flink.changelog.fs.FsStateChangelogOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.StateChangelogOptions;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.util.FileUtils;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Flink's changelog state backend on top of Lethe ({@code state.changelog.enabled: true}, the
 * changelog in files): a job with every kind of keyed state, TTL state, timers and windows fails once
 * after a checkpoint and recovers from the changelog and Lethe's materialized snapshot. Its lines,
 * replays included, are exactly those of a run without failure on the HashMap backend: recomputed
 * lines repeat, and a line that restored state got wrong would differ.
 */
class ChangelogOnLetheTest {
    private static final Path CHANGELOG = TestJobs.temporaryDirectory("lethe-changelog");

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER = new MiniClusterExtension(
            new MiniClusterResourceConfiguration.Builder().setNumberTaskManagers(1).setNumberSlotsPerTaskManager(4)
                    .setConfiguration(changelogStorage()).build());

    @Test
    void recoversFromTheChangelogWithTheLinesOfARunWithoutFailure(@TempDir Path checkpoints) throws Exception {
        Set<String> expected = AllStatesJob.linesWithoutFailure();

        FailOnceAfterCheckpoint.reset(() -> true);
        Configuration conf = AllStatesJob.onLetheWithOneRestart(checkpoints);
        conf.set(StateChangelogOptions.ENABLE_STATE_CHANGE_LOG, true);
        conf.set(StateChangelogOptions.PERIODIC_MATERIALIZATION_INTERVAL, Duration.ofMillis(300));
        // Flink discards changelog files once a materialization covers them, so by the end of the
        // run the directory may be empty again: it is watched while the job runs.
        AtomicBoolean written = new AtomicBoolean();
        Thread watcher = watch(CHANGELOG, written);
        try {
            AllStatesJob.run(conf, new FailOnceAfterCheckpoint());
        } finally {
            watcher.interrupt();
            watcher.join();
        }

        assertTrue(FailOnceAfterCheckpoint.failed(), "the job never failed");
        assertTrue(written.get(), "nothing was written to the changelog in " + CHANGELOG);
        assertEquals(expected, new TreeSet<>(AllStatesJob.OUTPUT), "lines with the changelog on Lethe, across a failure");
    }

    private static Configuration changelogStorage() {
        Configuration conf = new Configuration();
        conf.set(StateChangelogOptions.STATE_CHANGE_LOG_STORAGE, "filesystem");
        conf.set(FsStateChangelogOptions.BASE_PATH, CHANGELOG.toUri().toString());
        return conf;
    }

    /** A thread that sets {@code seen} once a file appears under {@code dir}, until interrupted. */
    private static Thread watch(Path dir, AtomicBoolean seen) {
        Thread watcher = new Thread(() -> {
            while (!seen.get() && !Thread.currentThread().isInterrupted()) {
                try {
                    if (hasFiles(dir)) seen.set(true);
                    Thread.sleep(5);
                } catch (InterruptedException e) {
                    return;
                } catch (IOException | UncheckedIOException e) {
                    // a file vanished while the walk listed it: the next walk decides
                }
            }
        }, "changelog-watcher");
        watcher.start();
        return watcher;
    }

    private static boolean hasFiles(Path dir) throws IOException {
        try (var files = Files.walk(dir)) {
            return files.anyMatch(Files::isRegularFile);
        }
    }

    @AfterAll
    static void removeChangelog() throws IOException {
        FileUtils.deleteDirectory(CHANGELOG.toFile());
    }
}
