package io.netreduce.verbs.tcp;

import io.netreduce.verbs.Access;
import io.netreduce.verbs.CompletionQueue;
import io.netreduce.verbs.Device;
import io.netreduce.verbs.DeviceOptions;
import io.netreduce.verbs.MemoryRegion;
import io.netreduce.verbs.ProtectionDomain;
import io.netreduce.verbs.QpAttributes;
import io.netreduce.verbs.QueuePair;
import io.netreduce.verbs.RecvRequest;
import io.netreduce.verbs.SendOpcode;
import io.netreduce.verbs.SendRequest;
import io.netreduce.verbs.Verbs;
import io.netreduce.verbs.WcStatus;
import io.netreduce.verbs.WorkCompletion;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Single-connection goodput of the TCP provider on loopback, next to plain Java NIO over
 * one socket as a same-run baseline (compare with iperf3 too; see docs/benchmarks.md).
 *
 * <pre>
 * args: [send|write|nio] [messageBytes=1048576] [seconds=10] [window=8] [shared|distinct]
 * </pre>
 *
 * "send" posts SENDs into posted RECVs (the receive queue is kept twice as deep as the
 * send window, as an RC application does so that a send rarely meets an empty queue), "write" posts RDMA WRITEs into one registered
 * region, "nio" writes the same message size over a plain blocking SocketChannel. Payload
 * bytes only (headers and ACKs are not counted). "shared" (the default) sends every
 * message from one source buffer into one destination buffer, as iperf3 and the NIO
 * baseline do, so all three touch the same amount of memory; "distinct" gives every
 * in-flight message its own buffers (more cache and TLB misses, closer to an application
 * streaming a large tensor). Prints the result and the queue pairs' counters.
 */
public final class TcpGoodputBenchmark {
    private TcpGoodputBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        String mode = args.length > 0 ? args[0] : "send";
        int size = args.length > 1 ? Integer.parseInt(args[1]) : 1 << 20;
        int seconds = args.length > 2 ? Integer.parseInt(args[2]) : 10;
        int window = args.length > 3 ? Integer.parseInt(args[3]) : 8;
        boolean distinct = args.length > 4 && args[4].equals("distinct");
        long bytes = mode.equals("nio") ? nio(size, seconds)
                : verbs(mode.equals("write"), size, window, distinct ? size : 0, seconds);
        double s = (measuredEnd - measuredStart) / 1e9;
        // CPU seconds (user + system of this process, i.e. both ends) per GB moved, over the
        // measured interval only: on a shared machine this says more about the provider's
        // cost than wall-clock goodput does.
        double cpu = (cpuEnd - cpuStart) / 1e9;
        System.out.printf("mode=%s buffers=%s size=%d window=%d seconds=%.2f bytes=%d goodput=%.3f GB/s (%.2f Gbit/s)"
                        + " cpu=%.2f s cpuPerGB=%.3f s%n",
                mode, distinct ? "distinct" : "shared", size, window, s, bytes, bytes / s / 1e9, bytes * 8 / s / 1e9,
                cpu, cpu / (bytes / 1e9));
    }

    private static final com.sun.management.OperatingSystemMXBean OS =
            (com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean();
    private static long measuredStart;
    private static long measuredEnd;
    private static long cpuStart;
    private static long cpuEnd;

    /** Starts the measured interval (after set-up) and returns its deadline. */
    private static long startMeasuring(int seconds) {
        cpuStart = OS.getProcessCpuTime();
        measuredStart = System.nanoTime();
        return measuredStart + TimeUnit.SECONDS.toNanos(seconds);
    }

    private static void stopMeasuring() {
        measuredEnd = System.nanoTime();
        cpuEnd = OS.getProcessCpuTime();
    }

    /** {@code stride}: distance between the buffers of consecutive slots (0: all share one). */
    private static long verbs(boolean rdmaWrite, int size, int window, int stride, int seconds) throws Exception {
        DeviceOptions oa = DeviceOptions.builder().localAddress("127.0.0.10").port(0).build();
        DeviceOptions ob = DeviceOptions.builder().localAddress("127.0.0.20").port(0).build();
        try (Device a = Verbs.open("tcp", oa); Device b = Verbs.open("tcp", ob)) {
            CompletionQueue cqa = a.createCompletionQueue(4 * window);
            CompletionQueue cqb = b.createCompletionQueue(4 * window);
            ProtectionDomain pda = a.allocateProtectionDomain();
            ProtectionDomain pdb = b.allocateProtectionDomain();
            QueuePair x = pda.createQueuePair(QpAttributes.builder(cqa, cqa).maxSendWr(window).maxRecvWr(window).build());
            QueuePair y = pdb.createQueuePair(QpAttributes.builder(cqb, cqb).maxSendWr(window).maxRecvWr(2 * window).build());
            CompletableFuture<Void> f = CompletableFuture.runAsync(() -> y.connect(x.localEndpoint(), Duration.ofSeconds(10)));
            x.connect(y.localEndpoint(), Duration.ofSeconds(10));
            f.get(10, TimeUnit.SECONDS);
            // Non-constant data: pages of one repeated value are merged and slow to rewrite.
            ByteBuffer srcBuf = ByteBuffer.allocateDirect(size + (window - 1) * stride);
            byte[] noise = new byte[srcBuf.capacity()];
            new Random(1).nextBytes(noise);
            srcBuf.put(noise, 0, srcBuf.capacity()).clear();
            MemoryRegion src = pda.register(srcBuf, EnumSet.of(Access.LOCAL_WRITE));
            int depth = 2 * window;
            ByteBuffer dstBuf = ByteBuffer.allocateDirect(size + (depth - 1) * stride);
            while (dstBuf.hasRemaining()) {
                dstBuf.put(noise, 0, Math.min(noise.length, dstBuf.remaining()));
            }
            dstBuf.clear();
            MemoryRegion dst = pdb.register(dstBuf, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE));
            RecvRequest r = new RecvRequest();
            if (!rdmaWrite) {
                for (int i = 0; i < depth; i++) {
                    r.reset().wrId(i).sgl().add(dst, i * stride, size);
                    y.postRecv(r);
                }
            }
            SendRequest s = new SendRequest();
            long end = startMeasuring(seconds);
            WorkCompletion[] wcs = new WorkCompletion[window];
            WorkCompletion[] recvWcs = new WorkCompletion[2 * window];
            for (int i = 0; i < recvWcs.length; i++) {
                recvWcs[i] = new WorkCompletion();
            }
            for (int i = 0; i < window; i++) {
                wcs[i] = new WorkCompletion();
                post(x, s, src, dst, rdmaWrite, i, size, stride);
            }
            long completed = 0;
            long posted = window;
            boolean stopping = false;
            while (completed < posted) {
                stopping |= System.nanoTime() >= end;
                // Block on send completions (never spin: this box has 2 cores). A send
                // completes only after its message was delivered, so receives are reposted
                // in time by polling their queue right after.
                int n = cqa.poll(wcs, Duration.ofMillis(10));
                if (!rdmaWrite) {
                    int m = cqb.poll(recvWcs);
                    for (int i = 0; i < m; i++) {
                        check(recvWcs[i]);
                        r.reset().wrId(recvWcs[i].wrId()).sgl().add(dst, (int) recvWcs[i].wrId() * stride, size);
                        y.postRecv(r);
                    }
                }
                for (int i = 0; i < n; i++) {
                    check(wcs[i]);
                    completed++;
                    if (!stopping) {
                        post(x, s, src, dst, rdmaWrite, (int) wcs[i].wrId(), size, stride);
                        posted++;
                    }
                }
            }
            stopMeasuring();
            System.out.println("sender " + x.counters() + " receiver " + y.counters());
            java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
            StringBuilder cpu = new StringBuilder("thread cpu s:");
            for (Thread t : Thread.getAllStackTraces().keySet()) {
                long ns = mx.getThreadCpuTime(t.getId());
                if (ns > 50_000_000L) {
                    cpu.append(String.format(" %s=%.2f", t.getName(), ns / 1e9));
                }
            }
            System.out.println(cpu);
            return completed * size;
        }
    }

    private static void post(QueuePair qp, SendRequest s, MemoryRegion src, MemoryRegion dst, boolean rdmaWrite,
                             int slot, int size, int stride) {
        s.reset().wrId(slot).sgl().add(src, slot * stride, size);
        if (rdmaWrite) {
            s.opcode(SendOpcode.RDMA_WRITE).remote(dst.address() + (long) slot * stride, dst.rkey());
        }
        qp.postSend(s);
    }

    private static void check(WorkCompletion wc) {
        if (wc.status() != WcStatus.SUCCESS) {
            throw new IllegalStateException("benchmark completion failed: " + wc);
        }
    }

    /** Plain NIO: one blocking socket, writer thread and reader thread, message-sized writes and reads. */
    private static long nio(int size, int seconds) throws Exception {
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress("127.0.0.20", 0));
            SocketChannel client = SocketChannel.open(server.getLocalAddress());
            SocketChannel accepted = server.accept();
            ByteBuffer out = ByteBuffer.allocateDirect(size);
            byte[] noise = new byte[size];
            new Random(1).nextBytes(noise);
            out.put(noise).clear();
            long end = startMeasuring(seconds);
            Thread writer = new Thread(() -> {
                try {
                    while (System.nanoTime() < end) {
                        out.clear();
                        while (out.hasRemaining()) {
                            client.write(out);
                        }
                    }
                    client.close();
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            }, "nio-writer");
            writer.start();
            ByteBuffer in = ByteBuffer.allocateDirect(size);
            long total = 0;
            while (true) {
                in.clear();
                int n = accepted.read(in);
                if (n < 0) {
                    break;
                }
                total += n;
            }
            writer.join();
            stopMeasuring();
            accepted.close();
            return total;
        }
    }
}
