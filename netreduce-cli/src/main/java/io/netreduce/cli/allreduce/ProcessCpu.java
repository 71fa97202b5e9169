package io.netreduce.cli.allreduce;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * CPU time of this whole process (every thread: the caller's, the transport's, the JIT's and
 * the collector's) over an interval, the figure that does not depend on what else runs on
 * a shared machine: a rank's cost per all-reduce is this around its timed loop.
 *
 * <p>Two clocks, because neither alone is right. The JVM's process CPU time counts threads
 * that ended during the interval but moves in scheduler ticks (10 ms here, as much as a
 * small all-reduce loop takes). Linux's per-thread {@code /proc/self/task/*}/schedstat
 * counts every thread, native ones included, to the nanosecond, but forgets threads that
 * ended. The per-thread sum is used unless the process clock says more than its ticks'
 * worth of work went missing with ended threads; without {@code /proc} the process clock.
 */
final class ProcessCpu {
    /** Allowance for the process clock's tick at each end of the interval. */
    private static final long PROCESS_CLOCK_SLACK_NANOS = 25_000_000L;
    private static final Path TASKS = Path.of("/proc/self/task");
    private static final com.sun.management.OperatingSystemMXBean OS = os();

    private final long processStart;
    private final Map<String, Long> threadStart;

    private ProcessCpu() {
        processStart = processNanos();
        threadStart = threadNanos();
    }

    /** Starts an interval. */
    static ProcessCpu start() {
        return new ProcessCpu();
    }

    /** CPU nanoseconds the process used since {@link #start()}, or -1 where the JVM cannot tell. */
    long elapsedNanos() {
        long process = processStart < 0 ? -1 : processNanos() - processStart;
        Map<String, Long> now = threadNanos();
        if (threadStart == null || now == null) {
            return process;
        }
        long sum = 0;
        for (Map.Entry<String, Long> e : now.entrySet()) {
            sum += e.getValue() - threadStart.getOrDefault(e.getKey(), 0L);
        }
        return process > sum + PROCESS_CLOCK_SLACK_NANOS ? process : sum;
    }

    private static long processNanos() {
        long t = OS == null ? -1 : OS.getProcessCpuTime();
        return t < 0 ? -1 : t;
    }

    /** Each live thread's CPU nanoseconds by thread id, or null without /proc. */
    private static Map<String, Long> threadNanos() {
        Map<String, Long> cpu = new HashMap<>();
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(TASKS)) {
            for (Path task : tasks) {
                try {
                    String line = Files.readString(task.resolve("schedstat"));
                    int space = line.indexOf(' ');
                    cpu.put(task.getFileName().toString(), Long.parseLong(space < 0 ? line.trim()
                            : line.substring(0, space)));
                } catch (IOException | NumberFormatException e) {
                    // the thread ended between the listing and the read: it no longer counts
                }
            }
            return cpu;
        } catch (IOException | UnsupportedOperationException e) {
            return null;
        }
    }

    private static com.sun.management.OperatingSystemMXBean os() {
        return ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean b
                ? b : null;
    }
}
