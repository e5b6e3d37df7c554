package io.lethe.bench.jobs;

import static org.junit.jupiter.api.Assertions.assertFalse;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Deleting a run's directory succeeds while another thread removes files in it, as a backend does
 * with its subsumed checkpoint files when a job ends (a walk that failed on a vanished file lost
 * two ForSt runs' results).
 */
class DeleteTreeTest {
    @Test
    void filesVanishingDuringTheWalkAreNoError(@TempDir Path tmp) throws Exception {
        for (int round = 0; round < 4; round++) {
            Path dir = tmp.resolve("run-" + round);
            Path shared = Files.createDirectories(dir.resolve("checkpoints").resolve("shared"));
            for (int i = 0; i < 2000; i++) {
                Files.writeString(shared.resolve("f" + i), "x");
            }
            AtomicBoolean stop = new AtomicBoolean();
            Thread remover = new Thread(() -> {
                for (int i = 1999; i >= 0 && !stop.get(); i--) {
                    try {
                        Files.deleteIfExists(shared.resolve("f" + i));
                    } catch (Exception e) {
                        return; // the directory went away meanwhile
                    }
                }
            });
            remover.start();
            ExpiryJobBench.deleteTree(dir);
            stop.set(true);
            remover.join();
            assertFalse(Files.exists(dir), "the directory is gone");
        }
    }
}
