package io.lethe.flink.restore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lethe.flink.testing.AllStatesJob;
import io.lethe.flink.testing.FailOnceAfterCheckpoint;
import io.lethe.flink.testing.TestJobs;

import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.StateRecoveryOptions;
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
import java.nio.file.FileVisitResult;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Local recovery on a TaskManager that keeps its slots: a job on Lethe fails once after a checkpoint,
 * and just before it fails, every table file in the checkpoint storage is deleted. The job can only
 * recover from the copies its TaskManager kept, and it does: its lines, replays included, are
 * exactly those of a run without failure on the HashMap backend.
 */
class LocalRecoveryJobTest {
    private static final Path LOCAL_ROOT = TestJobs.temporaryDirectory("lethe-local-recovery");

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER = new MiniClusterExtension(
            new MiniClusterResourceConfiguration.Builder().setNumberTaskManagers(1).setNumberSlotsPerTaskManager(4)
                    .setConfiguration(localRecovery()).build());

    @Test
    void recoversFromTheTaskManagersCopiesWhenTheStorageLostItsTables(@TempDir Path checkpoints) throws Exception {
        Set<String> expected = AllStatesJob.linesWithoutFailure();

        AtomicInteger deleted = new AtomicInteger();
        // The job fails once table files are in the storage, right after they are deleted.
        FailOnceAfterCheckpoint.reset(() -> {
            deleted.set(deleteTables(checkpoints));
            return deleted.get() > 0;
        });
        Configuration conf = AllStatesJob.onLetheWithOneRestart(checkpoints);
        conf.set(StateRecoveryOptions.LOCAL_RECOVERY, true);
        // Every table in a file of its own (small ones would be inlined into the checkpoint's metadata).
        conf.set(CheckpointingOptions.FS_SMALL_FILE_THRESHOLD, MemorySize.ZERO);
        AllStatesJob.run(conf, new FailOnceAfterCheckpoint());

        assertTrue(FailOnceAfterCheckpoint.failed(), "the job never failed");
        assertTrue(deleted.get() > 0, "no table file in the checkpoint storage to delete");
        assertEquals(expected, new TreeSet<>(AllStatesJob.OUTPUT), "lines across a failure, recovered locally");
    }

    /**
     * Deletes the table files of every checkpoint in the storage; returns how many. Flink removes
     * subsumed checkpoints meanwhile (one every 100 ms), so files and directories may vanish during
     * the walk: a walk that failed on one made the gate fail the job before anything was deleted.
     */
    private static int deleteTables(Path checkpoints) {
        AtomicInteger deleted = new AtomicInteger();
        try {
            Files.walkFileTree(checkpoints, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                    if (attrs.isRegularFile() && isTable(file) && Files.deleteIfExists(file)) {
                        deleted.incrementAndGet();
                    }
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFileFailed(Path file, IOException e) throws IOException {
                    if (e instanceof NoSuchFileException) {
                        return FileVisitResult.CONTINUE;
                    }
                    throw e;
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return deleted.get();
    }

    /** Table files are uploaded under random names into the shared directory; only they are there. */
    private static boolean isTable(Path file) {
        return file.getParent() != null && file.getParent().getFileName().toString().equals("shared");
    }

    private static Configuration localRecovery() {
        Configuration conf = new Configuration();
        conf.set(StateRecoveryOptions.LOCAL_RECOVERY, true);
        conf.set(CheckpointingOptions.LOCAL_RECOVERY_TASK_MANAGER_STATE_ROOT_DIRS, LOCAL_ROOT.toString());
        return conf;
    }

    @AfterAll
    static void removeLocalRoot() throws IOException {
        FileUtils.deleteDirectory(LOCAL_ROOT.toFile());
    }
}
