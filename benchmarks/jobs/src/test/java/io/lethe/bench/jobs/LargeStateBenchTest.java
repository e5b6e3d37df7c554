package io.lethe.bench.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** Which large-state runs a command line asks for, and how their results are gathered. */
class LargeStateBenchTest {

    @Test
    void withoutAListEveryJobRunsOnEachOfItsBackends() {
        assertEquals(List.of("keyed/lethe", "keyed/rocksdb", "keyed/forst", "keyed-async/lethe",
                "keyed-async/lethe-adaptor", "keyed-async/rocksdb", "keyed-async/forst", "windowed/lethe", "windowed/rocksdb", "windowed/rocksdb-heap-timers",
                "windowed/forst"), LargeStateBench.runs(List.of()));
    }

    @Test
    void listedRunsRunInTheirOrder() {
        assertEquals(List.of("windowed/forst", "keyed/lethe"),
                LargeStateBench.runs(List.of("windowed/forst", "keyed/lethe")));
    }

    @Test
    void anUnknownRunIsRefusedWithTheRunsThereAre() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> LargeStateBench.runs(List.of("keyed/rocksdb-heap-timers")));
        assertTrue(e.getMessage().contains("keyed/rocksdb-heap-timers") && e.getMessage().contains("windowed/forst"),
                e.getMessage());
    }

    @Test
    void gatheringKeepsEarlierRunsAndTakesTheNewOnes(@TempDir Path out) throws IOException {
        Files.write(out.resolve("largestate.csv"), List.of("job,backend,x", "keyed,lethe,1", "keyed,rocksdb,2",
                "windowed,lethe,3"));
        Path parts = Files.createDirectories(out.resolve("largestate-parts"));
        Files.write(parts.resolve("keyed-rocksdb.csv"), List.of("job,backend,x", "keyed,rocksdb,20"));
        Files.write(parts.resolve("windowed-forst.csv"), List.of("job,backend,x", "windowed,forst,40"));
        LargeStateBench.gather(out, "");
        assertEquals(List.of("job,backend,x", "keyed,lethe,1", "keyed,rocksdb,20", "windowed,lethe,3",
                "windowed,forst,40"), Files.readAllLines(out.resolve("largestate.csv")));
    }

    @Test
    void earlierRunsWithTheSameColumnsInAnotherOrderTakeTheNewOrder(@TempDir Path out) throws IOException {
        Files.write(out.resolve("largestate.csv"), List.of("job,backend,x,y", "keyed,lethe,1,2", "keyed,rocksdb,3,"));
        Path parts = Files.createDirectories(out.resolve("largestate-parts"));
        Files.write(parts.resolve("keyed-forst.csv"), List.of("job,backend,y,x", "keyed,forst,6,5"));
        LargeStateBench.gather(out, "");
        assertEquals(List.of("job,backend,y,x", "keyed,lethe,2,1", "keyed,rocksdb,,3", "keyed,forst,6,5"),
                Files.readAllLines(out.resolve("largestate.csv")));
    }

    @Test
    void earlierRunsWithoutANewColumnKeepItEmpty(@TempDir Path out) throws IOException {
        Files.write(out.resolve("largestate.csv"), List.of("job,backend,x", "keyed,lethe,1"));
        Path parts = Files.createDirectories(out.resolve("largestate-parts"));
        Files.write(parts.resolve("keyed-forst.csv"), List.of("job,backend,x,code", "keyed,forst,5,abc1234"));
        LargeStateBench.gather(out, "");
        assertEquals(List.of("job,backend,x,code", "keyed,lethe,1,", "keyed,forst,5,abc1234"),
                Files.readAllLines(out.resolve("largestate.csv")));
    }

    @Test
    void aRunWithOtherColumnsThanTheEarlierOnesIsRefused(@TempDir Path out) throws IOException {
        Files.write(out.resolve("largestate.csv"), List.of("job,backend,x", "keyed,lethe,1"));
        Path parts = Files.createDirectories(out.resolve("largestate-parts"));
        Files.write(parts.resolve("keyed-forst.csv"), List.of("job,backend,y", "keyed,forst,2"));
        IOException e = assertThrows(IOException.class, () -> LargeStateBench.gather(out, ""));
        assertTrue(e.getMessage().contains("keyed-forst.csv"), e.getMessage());
    }
}
