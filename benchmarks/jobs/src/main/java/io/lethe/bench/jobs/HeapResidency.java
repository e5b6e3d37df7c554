package io.lethe.bench.jobs;

import java.io.BufferedReader;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.management.JMException;
import javax.management.ObjectName;

/**
 * How much of the Java heap is resident. The JVM commits heap regions before it touches them, so resident
 * memory minus the committed heap undercounts native memory by the committed part not touched yet, and that
 * part changes as the heap expands and fills: it made "native" memory appear to grow while a job allocated
 * into fresh regions. The heap's address range comes from the {@code GC.heap_info} diagnostic command (G1
 * and the other collectors print it), its resident pages from {@code /proc/self/smaps}.
 */
final class HeapResidency {
    private static final Pattern RANGE = Pattern.compile("\\[0x([0-9a-f]+), ?0x([0-9a-f]+)[,)]");
    private static final long[] HEAP = range();

    private HeapResidency() {}

    /** Resident bytes of the heap's address range; -1 when unknown (not Linux, or no range printed). */
    static long residentBytes() {
        if (HEAP == null) {
            return -1;
        }
        long kib = 0;
        boolean inHeap = false;
        try (BufferedReader in = Files.newBufferedReader(Path.of("/proc/self/smaps"))) {
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                int dash = line.indexOf('-');
                int space = line.indexOf(' ');
                if (dash > 0 && space > dash && isHex(line, dash)) {
                    long start = Long.parseUnsignedLong(line, 0, dash, 16);
                    long end = Long.parseUnsignedLong(line, dash + 1, space, 16);
                    inHeap = start >= HEAP[0] && end <= HEAP[1];
                } else if (inHeap && line.startsWith("Rss:")) {
                    kib += Long.parseLong(line.substring(4).trim().split("\\s+")[0]);
                }
            }
        } catch (IOException | NumberFormatException e) {
            return -1;
        }
        return kib * 1024;
    }

    private static boolean isHex(String line, int length) {
        for (int i = 0; i < length; i++) {
            if (Character.digit(line.charAt(i), 16) < 0) {
                return false;
            }
        }
        return true;
    }

    /** The heap's [start, end) addresses, or null. */
    private static long[] range() {
        try {
            Object info = ManagementFactory.getPlatformMBeanServer().invoke(
                    new ObjectName("com.sun.management:type=DiagnosticCommand"), "gcHeapInfo",
                    new Object[] {null}, new String[] {String[].class.getName()});
            Matcher m = RANGE.matcher(String.valueOf(info));
            if (!m.find()) {
                return null;
            }
            return new long[] {Long.parseUnsignedLong(m.group(1), 16), Long.parseUnsignedLong(m.group(2), 16)};
        } catch (JMException | RuntimeException e) {
            return null;
        }
    }
}
