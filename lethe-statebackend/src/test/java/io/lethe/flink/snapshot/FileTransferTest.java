package io.lethe.flink.snapshot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

class FileTransferTest {

    @Test
    void resultsComeInTheTasksOrderWhateverOrderTheyFinishIn() throws Exception {
        try (FileTransfer transfer = new FileTransfer(4)) {
            List<Callable<Integer>> tasks = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                int n = i;
                tasks.add(() -> {
                    Thread.sleep((8 - n) * 5L);  // the first tasks finish last
                    return n;
                });
            }
            assertEquals(List.of(0, 1, 2, 3, 4, 5, 6, 7), transfer.run(tasks));
        }
    }

    /** Three tasks that each wait for the other two: they finish only if three run at once. */
    @Test
    void tasksRunAtOnceUpToTheThreadCount() throws Exception {
        try (FileTransfer transfer = new FileTransfer(3)) {
            CyclicBarrier allThree = new CyclicBarrier(3);
            List<Callable<Integer>> tasks = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                tasks.add(() -> allThree.await(20, TimeUnit.SECONDS));
            }
            assertEquals(3, transfer.run(tasks).size());
        }
    }

    @Test
    void oneThreadRunsTheTasksOnTheCallersThread() throws Exception {
        try (FileTransfer transfer = new FileTransfer(1)) {
            Thread caller = Thread.currentThread();
            List<Callable<Thread>> tasks = List.of(Thread::currentThread, Thread::currentThread);
            for (Thread t : transfer.run(tasks)) {
                assertSame(caller, t);
            }
        }
    }

    @Test
    void aFailureSkipsTheTasksNotYetStartedAndIsThrown() throws Exception {
        try (FileTransfer transfer = new FileTransfer(2)) {
            AtomicInteger ranAfter = new AtomicInteger();
            List<Callable<Integer>> tasks = new ArrayList<>();
            tasks.add(() -> {
                throw new IOException("upload of 000007.sst failed");
            });
            tasks.add(() -> {
                Thread.sleep(200);
                return 1;
            });
            for (int i = 2; i < 10; i++) {
                tasks.add(ranAfter::incrementAndGet);
            }
            IOException e = assertThrows(IOException.class, () -> transfer.run(tasks));
            assertEquals("upload of 000007.sst failed", e.getMessage());
            assertEquals(0, ranAfter.get(), "tasks queued behind the failure ran");
        }
    }

    @Test
    void refusesFewerThanOneThread() {
        assertThrows(IllegalArgumentException.class, () -> new FileTransfer(0));
    }
}
