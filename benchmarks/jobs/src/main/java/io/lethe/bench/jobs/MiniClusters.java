package io.lethe.bench.jobs;

import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.runtime.minicluster.RpcServiceSharing;
import org.apache.flink.runtime.rpc.RpcSystem;
import org.apache.flink.streaming.api.graph.StreamGraph;
import org.apache.flink.util.Reference;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The MiniCluster a local environment would start (Flink's PerJobMiniClusterFactory: one TaskManager,
 * one slot at parallelism 1), made here so that the benchmarks hold it and can read a finished job's
 * checkpoint statistics, trigger savepoints and restore jobs on it.
 *
 * <p>Every run gets a cluster of its own, but they all borrow one RPC system: loading it copies its jar
 * and loads its classes into a class loader of their own, about a second per cluster on two cores, and
 * the JIT compiles that code anew each time, next to the job.
 */
final class MiniClusters {
    private static RpcSystem rpcSystem;

    private MiniClusters() {}

    /** A job that ran to its end: its id on the cluster and its result. */
    record Finished(JobID id, JobExecutionResult result) {}

    /**
     * Runs {@code graph} on {@code mini} to its end, sampling the size of {@code local} into {@code
     * samples} meanwhile ({@link ExpiryJobBench#sample}; {@code what} names the run in its progress).
     */
    static Finished runSampled(MiniCluster mini, StreamGraph graph, String what, Path local, List<long[]> samples)
            throws Exception {
        long start = System.nanoTime();
        AtomicBoolean done = new AtomicBoolean();
        Thread sampler = new Thread(() -> ExpiryJobBench.sample(what, local, start, done, samples), "sampler");
        sampler.setDaemon(true);
        sampler.start();
        try {
            JobID id = mini.submitJob(graph).get().getJobID();
            return new Finished(id, mini.requestJobResult(id).get()
                    .toJobExecutionResult(MiniClusters.class.getClassLoader()));
        } finally {
            done.set(true);
            sampler.join();
        }
    }

    /** A MiniCluster with one TaskManager of one slot, not yet started. */
    static MiniCluster oneSlot(Configuration conf) {
        return new MiniCluster(new MiniClusterConfiguration.Builder().setConfiguration(conf).setNumTaskManagers(1)
                .setNumSlotsPerTaskManager(1).setRpcServiceSharing(RpcServiceSharing.SHARED).build(),
                () -> Reference.borrowed(rpcSystem()));
    }

    /** The RPC system the clusters of this JVM share, loaded on first use and closed when the JVM exits. */
    private static synchronized RpcSystem rpcSystem() {
        if (rpcSystem == null) {
            RpcSystem loaded = RpcSystem.load();
            Runtime.getRuntime().addShutdownHook(new Thread(() -> close(loaded), "rpc-system-close"));
            rpcSystem = loaded;
        }
        return rpcSystem;
    }

    private static void close(RpcSystem loaded) {
        try {
            loaded.close();
        } catch (Exception e) {
            System.err.println("could not close Flink's RPC system: " + e);
        }
    }
}
