package io.lethe.kafka.streams;

import org.junit.jupiter.api.extension.AnnotatedElementContext;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.io.TempDirFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Temporary directories in memory ({@code /dev/shm}) where the machine has it, else in the default
 * temporary directory. For tests whose subject is what an application computes, not what survives a
 * crash: Kafka Streams' {@code TopologyTestDriver} commits after every record, and every commit writes
 * the task's checkpoint file and syncs it, which on a disk costs milliseconds per record.
 */
final class MemoryTempDirs implements TempDirFactory {
    private static final Path SHARED_MEMORY = Path.of("/dev/shm");

    @Override
    public Path createTempDirectory(AnnotatedElementContext element, ExtensionContext extension) throws IOException {
        if (Files.isDirectory(SHARED_MEMORY) && Files.isWritable(SHARED_MEMORY)) {
            return Files.createTempDirectory(SHARED_MEMORY, "junit-");
        }
        return Files.createTempDirectory("junit-");
    }
}
