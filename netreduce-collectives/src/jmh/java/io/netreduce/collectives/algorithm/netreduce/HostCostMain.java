package io.netreduce.collectives.algorithm.netreduce;

import io.netreduce.collectives.algorithm.netreduce.MessageHooks;
import io.netreduce.collectives.algorithm.ProgressGuard;
import io.netreduce.collectives.algorithm.netreduce.RingSettings;
import io.netreduce.collectives.algorithm.netreduce.WindowedAllReduce;
import io.netreduce.testkit.inproc.InprocProvider;
import io.netreduce.testkit.inproc.InprocRing;
import io.netreduce.verbs.Access;
import io.netreduce.verbs.MemoryRegion;
import io.netreduce.wire.ina.InaHeader;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Locale;

/**
 * The same measurement as {@link HostCostBenchmark}, reported per core: the benchmark
 * thread's CPU time (ThreadMXBean) rather than wall time, because on a shared, overloaded
 * machine wall time mostly measures the wait for a core. The in-process provider does its
 * work in the caller's thread, so the CPU time covers host layer and provider bookkeeping.
 * Arguments: {@code [seconds per payload length]}. Prints GB/s of tensor per CPU-second
 * (1 GB = 1e9 B), best and median over the runs, with a 64 MiB copy as a same-run baseline.
 */
public final class HostCostMain {
    private HostCostMain() {
    }

    public static void main(String[] args) {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 5;
        int bytes = 64 << 20;
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        ByteBuffer src = ByteBuffer.allocateDirect(bytes);
        ByteBuffer dst = ByteBuffer.allocateDirect(bytes);
        for (int i = 0; i < bytes; i += 4) {
            src.putFloat(i, i * 0.5f);
        }
        System.out.printf(Locale.ROOT, "%-22s %8s %12s %12s %14s%n", "case", "ops", "best GB/s", "median GB/s",
                "ns/message");
        report("copy 64 MiB (baseline)", 1, seconds, mx, bytes, () -> dst.put(0, src, 0, bytes));
        for (int payload : new int[] {4096, 16384, 65536, 262144, 1048576}) {
            try (InprocRing ring = new InprocRing(InprocProvider.NAME, 1, null, 0)) {
                InprocRing.Rank rank = ring.ranks.get(0);
                MemoryRegion mr = rank.pd.register(src, EnumSet.of(Access.LOCAL_WRITE));
                try (WindowedAllReduce w = new WindowedAllReduce(rank.pd, rank.toNext, rank.fromPrev, rank.cq,
                        new RingSettings(1, 0, 1, InaHeader.DTYPE_FP32, 8, payload, Duration.ofSeconds(30)))) {
                    report("window 8, " + payload + " B", bytes / payload, seconds, mx, bytes,
                            () -> w.run(mr, 0, mr, 0, bytes / 4, 1, MessageHooks.NONE, ProgressGuard.NONE));
                }
            }
        }
    }

    private static void report(String name, int messages, double seconds, ThreadMXBean mx, int bytes, Runnable op) {
        for (int i = 0; i < 3; i++) {
            op.run(); // warm-up
        }
        double[] rates = new double[100_000];
        int n = 0;
        long end = System.nanoTime() + (long) (seconds * 1e9);
        while (System.nanoTime() < end && n < rates.length) {
            long c0 = mx.getCurrentThreadCpuTime();
            op.run();
            long cpu = Math.max(1, mx.getCurrentThreadCpuTime() - c0);
            rates[n++] = bytes / (double) cpu;
        }
        java.util.Arrays.sort(rates, 0, n);
        System.out.printf(Locale.ROOT, "%-22s %8d %12.1f %12.1f %14.0f%n", name, n, rates[n - 1], rates[n / 2],
                bytes / rates[n / 2] / messages);
    }
}
