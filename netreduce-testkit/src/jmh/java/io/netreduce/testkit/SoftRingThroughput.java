package io.netreduce.testkit;

import io.netreduce.wire.control.RingSpec;
import io.netreduce.wire.control.RingStatus;
import io.netreduce.wire.control.SwitchControlClient;
import java.net.URI;





import io.netreduce.netswitch.SwitchServer;
import io.netreduce.netswitch.dataplane.DataPlane;
import io.netreduce.netswitch.engine.SwitchCounters.Counter;
import io.netreduce.verbs.Access;
import io.netreduce.verbs.CompletionQueue;
import io.netreduce.verbs.Device;
import io.netreduce.verbs.DeviceOptions;
import io.netreduce.verbs.MemoryRegion;
import io.netreduce.verbs.ProtectionDomain;
import io.netreduce.verbs.QpAttributes;
import io.netreduce.verbs.QueuePair;
import io.netreduce.verbs.RecvRequest;
import io.netreduce.verbs.SendRequest;
import io.netreduce.verbs.Verbs;
import io.netreduce.verbs.WorkCompletion;
import io.netreduce.wire.ina.InaHeader;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

/**
 * End-to-end figure with real NICs' stand-ins: P soft-provider devices (each its own event
 * loop, GSO out and GRO in by default) in a ring through a running switch, one thread per
 * rank keeping N messages of K x 1 KiB in flight, fault-free. Reports packets/s through the
 * switch and the switch data-plane thread's CPU time per input packet.
 *
 * <p>Run: {@code mvn -pl netreduce-switch exec:exec -Dexec.classpathScope=test -Dexec.executable=java
 * -Dexec.args="-cp %classpath io.netreduce.netswitch.bench.SoftRingThroughput 4 2000 [WARMUP]"}
 */
public final class SoftRingThroughput {
    private static final int MTU = 1024;
    private static final int PACKETS = 8;
    private static final int PAYLOAD = PACKETS * MTU - InaHeader.LENGTH;
    private static final int WINDOW = 4;
    /** Tensor slices cycled through (the values do not matter for throughput). */
    private static final int SLICES = 16;

    private record Rank(int rank, Device device, QueuePair next, QueuePair prev, CompletionQueue sendCq,
                        CompletionQueue recvCq, MemoryRegion tensor, MemoryRegion result, MemoryRegion headers) {
    }

    public static void main(String[] args) throws Exception {
        int p = args.length > 0 ? Integer.parseInt(args[0]) : 4;
        int messages = args.length > 1 ? Integer.parseInt(args[1]) : 2000;
        // Messages run first to warm up the JIT, not measured; msgIds continue after them.
        int warmup = args.length > 2 ? Integer.parseInt(args[2]) : 0;
        int net = (127 << 24) | (93 << 16);
        try (SwitchServer server = SwitchServer.start(new InetSocketAddress(inet(net | 100), 0),
                new InetSocketAddress("127.0.0.1", 0), 256L << 20)) {
            List<Rank> ranks = new ArrayList<>();
            try {
                for (int r = 0; r < p; r++) {
                    Device d = Verbs.open("soft", DeviceOptions.builder().localAddress(inet(net | (10 + r)))
                            .gateway(server.dataAddress()).build());
                    ProtectionDomain pd = d.allocateProtectionDomain();
                    CompletionQueue scq = d.createCompletionQueue(1024);
                    CompletionQueue rcq = d.createCompletionQueue(1024);
                    QpAttributes attrs = QpAttributes.builder(scq, rcq).mtu(MTU).ackTimeout(Duration.ofMillis(200))
                            .maxSendWr(64).maxRecvWr(64).build();
                    EnumSet<Access> access = EnumSet.of(Access.LOCAL_WRITE);
                    ByteBuffer t = ByteBuffer.allocateDirect(SLICES * PAYLOAD);
                    for (int i = 0; i < t.capacity(); i += 4) {
                        t.putFloat(i, (i * 31 + r) % 1000 * 0.001f);
                    }
                    ranks.add(new Rank(r, d, pd.createQueuePair(attrs), pd.createQueuePair(attrs), scq, rcq,
                            pd.register(t, access), pd.register(ByteBuffer.allocateDirect(SLICES * PAYLOAD), access),
                            pd.register(ByteBuffer.allocateDirect(2 * SLICES * InaHeader.LENGTH), access)));
                }
                for (int r = 0; r < p; r++) {
                    Rank a = ranks.get(r);
                    Rank b = ranks.get((r + 1) % p);
                    a.next.connect(b.prev.localEndpoint(), Duration.ofSeconds(5));
                    b.prev.connect(a.next.localEndpoint(), Duration.ofSeconds(5));
                }
                new SwitchControlClient(URI.create("http://127.0.0.1:" + server.controlAddress().getPort()),
                        Duration.ofSeconds(10)).createRing(RingSpec.fp32(1, p, WINDOW, PAYLOAD, MTU),
                        SwitchRings.connections(ranks.stream().map(r -> r.next).toList(),
                                ranks.stream().map(r -> r.prev).toList()));
                runAll(ranks, p, 0, warmup);
                ThreadMXBean mx = ManagementFactory.getThreadMXBean();
                long switchThread = Thread.getAllStackTraces().keySet().stream()
                        .filter(t -> t.getName().equals(DataPlane.THREAD_NAME)).findFirst().orElseThrow().getId();
                long cpu0 = mx.getThreadCpuTime(switchThread);
                long in0 = server.engine().counters().get(Counter.PACKETS_IN);
                long t0 = System.nanoTime();
                Throwable failure = runAll(ranks, p, warmup, warmup + messages);
                double seconds = (System.nanoTime() - t0) / 1e9;
                double cpu = (mx.getThreadCpuTime(switchThread) - cpu0) / 1e9;
                long in = server.engine().counters().get(Counter.PACKETS_IN) - in0;
                System.out.printf("P=%d, %d messages of %d x %d B through soft devices: %s in %.2f s; switch received "
                                + "%d packets (%.0f kpkt/s in), aggregated %d, drops %d%n", p, messages, PACKETS, MTU,
                        failure == null ? "completed" : "FAILED (" + failure + ")", seconds, in,
                        in / seconds / 1e3, server.engine().counters().get(Counter.AGGREGATIONS_COMPLETED),
                        server.engine().counters().totalDrops());
                System.out.printf("switch data-plane thread CPU %.2f s (%.2f us per packet in, i.e. %.0f kpkt/s per "
                        + "core including the packets out); wall %.2f s%n", cpu, cpu * 1e6 / in, in / cpu / 1e3, seconds);
            } finally {
                for (Rank r : ranks) {
                    r.device.close();
                }
            }
        }
    }

    /** Messages [from, to) on every rank, one thread each; returns the first failure. */
    private static Throwable runAll(List<Rank> ranks, int p, int from, int to) throws InterruptedException {
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> threads = new ArrayList<>();
        for (Rank r : ranks) {
            Thread t = new Thread(() -> {
                try {
                    run(r, p, from, to);
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            }, "rank-" + r.rank);
            t.start();
            threads.add(t);
        }
        for (Thread t : threads) {
            t.join(300_000);
        }
        return failure.get();
    }

    /** One rank: message i+N goes after result i arrived. */
    private static void run(Rank r, int p, int from, int end) throws InterruptedException {
        InaHeader ina = new InaHeader();
        WorkCompletion[] wcs = new WorkCompletion[16];
        for (int i = 0; i < wcs.length; i++) {
            wcs[i] = new WorkCompletion();
        }
        int sent = from;
        int received = from;
        int sendsDone = from;
        long deadline = System.nanoTime() + 240_000_000_000L;
        while ((received < end || sendsDone < end) && System.nanoTime() < deadline) {
            while (sent < end && sent < received + WINDOW) {
                int s = sent % SLICES;
                RecvRequest recv = new RecvRequest(2).wrId(sent);
                recv.sgl().add(r.headers, (SLICES + s) * InaHeader.LENGTH, InaHeader.LENGTH)
                        .add(r.result, s * PAYLOAD, PAYLOAD);
                r.prev.postRecv(recv);
                ina.wrap(r.headers.buffer(), s * InaHeader.LENGTH).set(InaHeader.DTYPE_FP32, r.rank, 1, sent, PAYLOAD, sent);
                SendRequest send = new SendRequest(2).wrId(sent);
                send.sgl().add(r.headers, s * InaHeader.LENGTH, InaHeader.LENGTH).add(r.tensor, s * PAYLOAD, PAYLOAD);
                r.next.postSend(send);
                sent++;
            }
            int n = r.recvCq.poll(wcs, Duration.ofMillis(5));
            for (int k = 0; k < n; k++) {
                if (!wcs[k].status().isSuccess()) {
                    throw new IllegalStateException("rank " + r.rank + " receive failed: " + wcs[k]);
                }
                received++;
            }
            int s = r.sendCq.poll(wcs, Duration.ZERO);
            for (int k = 0; k < s; k++) {
                if (!wcs[k].status().isSuccess()) {
                    throw new IllegalStateException("rank " + r.rank + " send failed: " + wcs[k]);
                }
                sendsDone++;
            }
        }
        if (received < end || sendsDone < end) {
            throw new IllegalStateException("rank " + r.rank + " timed out: " + received + " results, " + sendsDone
                    + " sends of " + end);
        }
    }

    private static InetAddress inet(int ip) {
        try {
            return InetAddress.getByAddress(new byte[] {(byte) (ip >>> 24), (byte) (ip >>> 16), (byte) (ip >>> 8), (byte) ip});
        } catch (java.net.UnknownHostException e) {
            throw new IllegalArgumentException(e);
        }
    }
}
