package io.lethe.flink.async;

/** {@link BatchedRequestsTest} with the task thread serving every batch itself ({@code async-state.inline-batch-size}). */
class BatchedRequestsInlineTest extends BatchedRequestsTest {
    @Override
    int inlineBatchSize() {
        return Integer.MAX_VALUE;
    }
}
