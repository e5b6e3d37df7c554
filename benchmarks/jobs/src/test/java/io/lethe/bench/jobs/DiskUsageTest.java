package io.lethe.bench.jobs;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DiskUsageTest {
    private static final int MIB = 1 << 20;

    @Test
    void aHardLinkedCopyCountsOnce(@TempDir Path dir) throws Exception {
        Path db = Files.createDirectories(dir.resolve("db"));
        Files.write(db.resolve("a.sst"), new byte[4 * MIB]);
        long one = DiskUsage.of(dir);
        assertTrue(one >= 4 * MIB && one < 5 * MIB, "4 MiB file: " + one);
        // A checkpoint's local snapshot: a hard link to the same file.
        Path chk = Files.createDirectories(dir.resolve("chk-1"));
        Files.createLink(chk.resolve("a.sst"), db.resolve("a.sst"));
        long linked = DiskUsage.of(dir);
        assertTrue(linked >= one && linked < one + 64 * 1024, "the link adds only its directory: " + linked);
        Files.write(chk.resolve("b.sst"), new byte[MIB]);
        assertTrue(DiskUsage.of(dir) >= linked + MIB);
    }

    @Test
    void holesDoNotCount(@TempDir Path dir) throws Exception {
        try (RandomAccessFile f = new RandomAccessFile(dir.resolve("sparse.sst").toFile(), "rw")) {
            f.setLength(64L * MIB);  // all hole
            f.seek(32L * MIB);
            f.write(new byte[MIB]);
        }
        long used = DiskUsage.of(dir);
        assertTrue(used >= MIB && used < 4L * MIB, "1 MiB written into a 64 MiB file: " + used);
    }

    @Test
    void aMissingDirectoryTakesNothing(@TempDir Path dir) {
        assertEquals(0, DiskUsage.of(dir.resolve("absent")));
    }
}
