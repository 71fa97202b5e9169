package io.netreduce.verbs.soft;

import io.netreduce.verbs.DeviceOptions;
import io.netreduce.verbs.MemoryRegion;
import io.netreduce.verbs.RecvRequest;
import io.netreduce.verbs.SendRequest;
import io.netreduce.verbs.WcStatus;
import io.netreduce.verbs.WorkCompletion;
import java.time.Duration;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * Goodput of one soft-RoCE queue pair on loopback: host A streams SENDs of
 * {@code messageBytes} to host B, which keeps receives posted. One driver thread posts and
 * polls both sides, so the two device event loops get the machine's cores. Prints
 * GB/s (10^9 bytes of payload per second) per MTU.
 *
 * <p>Run: {@code mvn -B -q -pl netreduce-verbs test-compile exec:java -Dexec.classpathScope=test
 * -Dexec.mainClass=io.netreduce.verbs.soft.SoftGoodputBenchmark -Dexec.args="1024 4096"}
 * (arguments: MTUs; system properties {@code bench.seconds}, {@code bench.message},
 * {@code bench.window}, {@code bench.gso}, {@code bench.gro}).
 */
public final class SoftGoodputBenchmark {
    private SoftGoodputBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        int seconds = Integer.getInteger("bench.seconds", 5);
        int message = Integer.getInteger("bench.message", 256 << 10);
        int window = Integer.getInteger("bench.window", 16);
        String[] mtus = args.length > 0 ? args : new String[] {"1024", "4096"};
        int round = 0;
        for (String m : mtus) {
            int mtu = Integer.parseInt(m);
            double gbps = run(mtu, message, window, seconds, round++);
            System.out.printf(Locale.ROOT, "soft RC goodput: MTU %d, %d-byte SENDs, window %d: %.3f GB/s%n", mtu, message,
                    window, gbps);
        }
    }

    private static DeviceOptions.Builder host(String address) {
        DeviceOptions.Builder b = DeviceOptions.builder().localAddress(address);
        for (String k : new String[] {"gso", "gro", "maxOutstandingPsns", "ackEvery", "busyPoll", "gatherMinBytes"}) {
            String v = System.getProperty("bench." + k);
            if (v != null) {
                b.property("soft." + k, v);
            }
        }
        return b;
    }

    /** CPU time of this JVM so far (all threads), to tell a slow datapath from a starved one. */
    static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory
                .getOperatingSystemMXBean()).getProcessCpuTime();
    }

    /** CPU nanoseconds of every live thread, by name. */
    static java.util.Map<String, Long> threadCpu() {
        java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
        java.util.Map<String, Long> m = new java.util.TreeMap<>();
        for (long id : mx.getAllThreadIds()) {
            java.lang.management.ThreadInfo info = mx.getThreadInfo(id);
            long cpu = mx.getThreadCpuTime(id);
            if (info != null && cpu > 0) {
                m.merge(info.getThreadName(), cpu, Long::sum);
            }
        }
        return m;
    }

    /** Per-thread CPU used since {@code before}, and goodput per CPU-second of each event loop. */
    static String threadCpuSince(java.util.Map<String, Long> before, double bytes) {
        StringBuilder sb = new StringBuilder();
        for (var e : threadCpu().entrySet()) {
            double s = (e.getValue() - before.getOrDefault(e.getKey(), 0L)) / 1e9;
            if (s > 0.05) {
                sb.append(String.format(Locale.ROOT, "%s %.2f s", e.getKey(), s));
                if (e.getKey().startsWith("soft-rdma")) {
                    sb.append(String.format(Locale.ROOT, " (%.2f GB/CPU-s)", bytes / s / 1e9));
                }
                sb.append("; ");
            }
        }
        return sb.toString();
    }

    static double run(int mtu, int message, int window, int seconds, int round) throws Exception {
        try (SoftPair pair = new SoftPair(host("127.0.77." + (2 * round + 1)), host("127.0.77." + (2 * round + 2)),
                q -> q.mtu(mtu).maxSendWr(window * 2).maxRecvWr(window * 2).ackTimeout(Duration.ofMillis(200)))) {
            MemoryRegion src = pair.a.register(message * window);
            MemoryRegion dst = pair.b.register(message * window);
            SplittableRandom r = new SplittableRandom(1);
            java.nio.ByteBuffer sb = src.buffer();
            java.nio.ByteBuffer db = dst.buffer();
            for (int i = 0; i + 8 <= sb.capacity(); i += 8) {
                sb.putLong(i, r.nextLong()); // non-constant data (no page merging), pre-touched
                db.putLong(i, ~i);
            }
            SendRequest sr = new SendRequest(1);
            RecvRequest rr = new RecvRequest(1);
            WorkCompletion[] wcs = new WorkCompletion[64];
            long posted = 0;
            long sendDone = 0;
            long recvPosted = 0;
            long received = 0;
            long warmupEnd = System.nanoTime() + Duration.ofSeconds(1).toNanos();
            long start = 0;
            long startCount = 0;
            long end = Long.MAX_VALUE;
            long cpuStart = 0;
            java.util.Map<String, Long> threadsStart = java.util.Map.of();
            while (true) {
                long now = System.nanoTime();
                if (start == 0 && now >= warmupEnd) {
                    start = now;
                    startCount = received;
                    cpuStart = processCpuNanos();
                    threadsStart = threadCpu();
                    end = start + Duration.ofSeconds(seconds).toNanos();
                }
                if (now >= end) {
                    double secs = (now - start) / 1e9;
                    double cpu = (processCpuNanos() - cpuStart) / 1e9;
                    System.out.printf(Locale.ROOT, "  CPU %.2f s in %.2f s wall (%.0f%% of one core); %.2f GB per CPU-second%n", cpu, secs,
                            100 * cpu / secs, (received - startCount) * (double) message / cpu / 1e9);
                    System.out.println("  thread CPU: "
                            + threadCpuSince(threadsStart, (received - startCount) * (double) message));
                    System.out.println("  sender " + pair.a.qp.counters() + "\n  receiver " + pair.b.qp.counters());
                    return (received - startCount) * (double) message / secs / 1e9;
                }
                boolean progress = false;
                while (recvPosted - received < window * 2L) {
                    int slot = (int) (recvPosted % window);
                    rr.reset().wrId(recvPosted++).sgl().add(dst, slot * message, message);
                    pair.b.qp.postRecv(rr);
                }
                while (posted - sendDone < window) {
                    int slot = (int) (posted % window);
                    sr.reset().wrId(posted++).sgl().add(src, slot * message, message);
                    pair.a.qp.postSend(sr);
                    progress = true;
                }
                int n = pair.a.sendCq.poll(wcs);
                for (int i = 0; i < n; i++) {
                    if (wcs[i].status() != WcStatus.SUCCESS) {
                        throw new IllegalStateException("send failed: " + wcs[i]);
                    }
                }
                sendDone += n;
                // Block (no spinning: the driver must not steal the event loops' cores) when
                // nothing else is to be done; the CQ wakes us on the next receive completion.
                int k = n == 0 && !progress ? pair.b.recvCq.poll(wcs, Duration.ofMillis(2)) : pair.b.recvCq.poll(wcs);
                for (int i = 0; i < k; i++) {
                    if (wcs[i].status() != WcStatus.SUCCESS) {
                        throw new IllegalStateException("receive failed: " + wcs[i]);
                    }
                }
                received += k;
            }
        }
    }
}
