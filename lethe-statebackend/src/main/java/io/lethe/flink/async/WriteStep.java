package io.lethe.flink.async;

import io.lethe.engine.LetheDb;
import io.lethe.engine.WriteBatch;
import io.lethe.engine.WriteOptions;

import org.apache.flink.runtime.asyncprocessing.StateRequest;

import java.util.ArrayList;
import java.util.List;

/**
 * Writes of one key each (update, add, put, remove, clear of one entry), serialized on the task
 * thread into one engine write batch in the order they were issued ({@link BatchedWrites}) and
 * written on the serving thread; their requests complete then, or fail together if the write fails.
 */
final class WriteStep implements ServedBatch.Step {
    final WriteBatch batch = new WriteBatch(4 << 10);
    final List<StateRequest<?, ?, ?, ?>> requests = new ArrayList<>();
    private final BatchCounts counts;
    LetheDb db;
    private Exception failure;

    WriteStep(BatchCounts counts) {
        this.counts = counts;
    }

    @Override
    public int requests() {
        return requests.size();
    }

    @Override
    public void run() {
        if (batch.count() == 0) {
            return;
        }
        try {
            db.write(WriteOptions.DEFAULT, batch);
            counts.wrote(batch.count());
        } catch (Exception e) {
            failure = e;
        }
    }

    @Override
    public void complete() {
        for (StateRequest<?, ?, ?, ?> request : requests) {
            if (failure == null) {
                RequestOutcome.complete(request, null);
            } else {
                RequestOutcome.fail(request, failure);
            }
        }
    }

    @Override
    public void fail(Throwable cause) {
        requests.forEach(r -> RequestOutcome.fail(r, cause));
    }
}
