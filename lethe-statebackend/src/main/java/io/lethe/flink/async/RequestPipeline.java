package io.lethe.flink.async;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayDeque;

/**
 * The thread that serves the engine work of gathered state requests ({@link ServedBatch}), one
 * batch at a time in the order they were submitted: a record's requests may span two batches, so
 * batches never overtake each other. The task thread goes on with other records meanwhile; Flink
 * runs each request's callbacks in the task's mailbox.
 *
 * <p>{@link #drain} waits until everything submitted has run, before a request that must run on
 * the task thread. When the mailbox runs callbacks at once (tests), they run on this thread, and a
 * drain from here runs what is queued itself. The thread starts with the first batch and stops at
 * {@link #close}, after what was submitted before.
 *
 * <p>A small batch submitted while nothing is in flight is served by the submitting thread at once:
 * waking another thread for it, and the task thread again for its results, costs more than serving
 * it (with Flink SQL's asynchronous operators most batches hold a few requests).
 */
final class RequestPipeline implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(RequestPipeline.class);

    private final String name;
    private final int inlineBatchSize;
    private final int fullLoad;
    private final BatchCounts counts;
    private final ArrayDeque<ServedBatch> queue = new ArrayDeque<>();
    private int inFlight;
    private volatile int inFlightNow;
    private Thread thread;
    private boolean closed;

    /**
     * @param name the serving thread's name
     * @param inlineBatchSize batches of at most this many requests are served by the submitting
     *     thread when nothing is in flight
     * @param fullLoad batches submitted and not yet served at which the pipeline counts as fully loaded
     * @param counts where batches handed to the thread are counted
     */
    RequestPipeline(String name, int inlineBatchSize, int fullLoad, BatchCounts counts) {
        this.name = name;
        this.inlineBatchSize = inlineBatchSize;
        this.fullLoad = fullLoad;
        this.counts = counts;
    }

    /**
     * Queues {@code batch} behind everything submitted before, or serves it now if it is small and
     * nothing is in flight; throws once closed.
     */
    void submit(ServedBatch batch) {
        if (batch.requests() <= inlineBatchSize && idle()) {
            batch.run();
            return;
        }
        counts.handedOver();
        enqueue(batch);
    }

    private synchronized void enqueue(ServedBatch batch) {
        if (closed) {
            throw new IllegalStateException("The Lethe state request pipeline was closed");
        }
        if (thread == null) {
            thread = new Thread(this::serve, name);
            thread.setDaemon(true);
            thread.setContextClassLoader(Thread.currentThread().getContextClassLoader());
            thread.start();
        }
        queue.add(batch);
        inFlightNow = ++inFlight;
        notifyAll();
    }

    /**
     * Whether nothing submitted is waiting or running. Read without the lock (it is asked per
     * batch): the thread writes the count after a batch ran, so a zero seen here follows its work.
     */
    boolean idle() {
        return inFlightNow == 0;
    }

    /** Batches handed to the thread and not yet served. */
    int inFlight() {
        return inFlightNow;
    }

    /** Whether as many batches as count as a full load are waiting or running. */
    boolean fullyLoaded() {
        return inFlightNow >= fullLoad;
    }

    /** Returns once every batch submitted so far has run and its requests completed. */
    void drain() throws InterruptedException {
        if (Thread.currentThread() == thread) {
            ServedBatch next;
            while ((next = poll()) != null) {
                runAndCount(next);
            }
            return;
        }
        synchronized (this) {
            while (inFlight > 0) {
                wait();
            }
        }
    }

    /** Serves what was submitted before, then stops the thread and waits for it. */
    @Override
    public void close() {
        Thread serving;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            serving = thread;
            notifyAll();
        }
        if (serving == null || serving == Thread.currentThread()) {
            return;
        }
        boolean interrupted = false;
        while (serving.isAlive()) {
            try {
                serving.join();
            } catch (InterruptedException e) {
                interrupted = true; // the engine stays open until the thread has stopped using it
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    private void serve() {
        ServedBatch next;
        while ((next = take()) != null) {
            runAndCount(next);
        }
    }

    /** The next batch, waiting for one; null once closed and empty. */
    private synchronized ServedBatch take() {
        while (queue.isEmpty() && !closed) {
            try {
                wait();
            } catch (InterruptedException e) {
                // only close stops the thread
            }
        }
        return queue.poll();
    }

    private synchronized ServedBatch poll() {
        return queue.poll();
    }

    private void runAndCount(ServedBatch batch) {
        try {
            batch.run();
        } catch (Throwable t) {
            LOG.error("Completing a batch of state requests failed", t);
        } finally {
            synchronized (this) {
                inFlightNow = --inFlight;
                notifyAll();
            }
        }
    }
}
