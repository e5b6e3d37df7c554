package io.lethe.bench.jobs;

import java.lang.management.ManagementFactory;

/** CPU time of this process: every thread, the JVM's and native ones (a state backend's own threads). */
public final class ProcessCpu {
    private ProcessCpu() {}

    /** CPU time this process has used so far, in nanoseconds. */
    public static long nanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }
}
