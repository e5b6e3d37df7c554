package io.lethe.flink.async;

import java.util.ArrayList;
import java.util.List;

/**
 * The engine work of state requests gathered on the task thread, for the serving thread: steps
 * (multi-gets, write batches) in the order they must run, so that a read sees the writes issued
 * before it, then every request's outcome. Futures complete only after all steps ran.
 */
final class ServedBatch {
    /** One engine call's worth of requests. */
    interface Step {
        /** Does the engine work and keeps each request's outcome. */
        void run();

        /** Completes each request's future with its outcome. */
        void complete();

        /** Fails each request's future, when the batch could not run. */
        void fail(Throwable cause);

        /** How many requests the step serves. */
        int requests();
    }

    private final List<Step> steps = new ArrayList<>();

    void add(Step step) {
        if (step != null) {
            steps.add(step);
        }
    }

    boolean isEmpty() {
        return steps.isEmpty();
    }

    /** How many requests the batch serves. */
    int requests() {
        int n = 0;
        for (Step step : steps) {
            n += step.requests();
        }
        return n;
    }

    /** Runs the steps in order, then completes their requests; fails them all if a step could not run. */
    void run() {
        try {
            for (Step step : steps) {
                step.run();
            }
        } catch (RuntimeException | Error e) {
            fail(e);
            return;
        }
        for (Step step : steps) {
            step.complete();
        }
    }

    void fail(Throwable cause) {
        for (Step step : steps) {
            step.fail(cause);
        }
    }
}
