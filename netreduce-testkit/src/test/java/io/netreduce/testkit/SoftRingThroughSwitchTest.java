package io.netreduce.testkit;

import io.netreduce.wire.control.RingSpec;
import io.netreduce.wire.control.RingStatus;
import io.netreduce.wire.control.SwitchControlClient;
import java.net.URI;





import io.netreduce.netswitch.SwitchServer;
import io.netreduce.netswitch.engine.SwitchCounters.Counter;
import io.netreduce.verbs.Access;
import io.netreduce.verbs.CompletionQueue;
import io.netreduce.verbs.Device;
import io.netreduce.verbs.DeviceOptions;
import io.netreduce.verbs.FaultPlan;
import io.netreduce.verbs.MemoryRegion;
import io.netreduce.verbs.ProtectionDomain;
import io.netreduce.verbs.QpAttributes;
import io.netreduce.verbs.QueuePair;
import io.netreduce.verbs.RecvRequest;
import io.netreduce.verbs.SendRequest;
import io.netreduce.verbs.Verbs;
import io.netreduce.verbs.soft.SoftProvider;
import io.netreduce.verbs.WorkCompletion;
import io.netreduce.wire.ina.InaHeader;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * End to end at the verbs level: P soft-provider devices on their own loopback addresses, each
 * with one RC queue pair to its successor and one from its predecessor, every datagram through
 * a running switch (the devices' gateway). Each rank all-reduces a tensor in place: message i
 * is a SEND of {@code [INA header, tensor slice i]} and its result lands, through a receive of
 * {@code [header scratch, tensor slice i]}, in the very slice it was sent from, so a NIC
 * retransmission after the result arrived carries the sum. Seeded loss, duplication and
 * reordering on both legs (device egress and ingress). Every rank must end with the sum in
 * rank order, bitwise.
 */
@Timeout(180)
class SoftRingThroughSwitchTest {
    private static final int MTU = 1024;
    private static final int PAYLOAD = 4 * MTU - InaHeader.LENGTH + 512; // 5 packets, the last one short
    private static final int MESSAGES = 24;
    private static final int WINDOW = 2;

    private static boolean softAvailable() {
        return new SoftProvider().unavailableReason() == null;
    }

    private static final class Rank {
        final int rank;
        final Device device;
        final ProtectionDomain pd;
        final CompletionQueue sendCq;
        final CompletionQueue recvCq;
        final QueuePair next;
        final QueuePair prev;
        final MemoryRegion tensor;
        final MemoryRegion sendHeaders;
        final MemoryRegion recvHeaders;

        Rank(int rank, InetAddress address, InetSocketAddress gateway, FaultPlan egress, FaultPlan ingress) {
            this.rank = rank;
            device = Verbs.open("soft", DeviceOptions.builder().localAddress(address).gateway(gateway)
                    .egressFaults(egress).ingressFaults(ingress).build());
            pd = device.allocateProtectionDomain();
            sendCq = device.createCompletionQueue(1024);
            recvCq = device.createCompletionQueue(1024);
            QpAttributes attrs = QpAttributes.builder(sendCq, recvCq).mtu(MTU).ackTimeout(Duration.ofMillis(200))
                    .maxSendWr(64).maxRecvWr(MESSAGES + 4).build();
            next = pd.createQueuePair(attrs);
            prev = pd.createQueuePair(attrs);
            EnumSet<Access> access = EnumSet.of(Access.LOCAL_WRITE);
            tensor = pd.register(ByteBuffer.allocateDirect(MESSAGES * PAYLOAD).order(ByteOrder.LITTLE_ENDIAN), access);
            sendHeaders = pd.register(ByteBuffer.allocateDirect(MESSAGES * InaHeader.LENGTH), access);
            recvHeaders = pd.register(ByteBuffer.allocateDirect(MESSAGES * InaHeader.LENGTH), access);
        }

        void close() {
            device.close();
        }
    }

    @ParameterizedTest(name = "P={0} seed={1}")
    @CsvSource({"2,501", "3,502", "4,503", "6,504", "8,505"})
    void ranksAllReduceInPlaceThroughTheSwitchUnderFaultsOnBothLegs(int p, long seed) throws Exception {
        Assumptions.assumeTrue(softAvailable(), "the soft verbs provider is not on the class path yet");
        double loss = 0.02;
        double dup = 0.02;
        double reorder = 0.02;
        run(p, seed, p, r -> new FaultPlan[] {new FaultPlan(seed * 100 + r, loss, dup, reorder, 0),
                new FaultPlan(seed * 100 + 50 + r, loss, dup, reorder, 0)}, (ranks, c) -> { });
    }

    /**
     * Loss on one rank's egress only: its receiver's NAKs make it go back N, and the other
     * ranks' receivers, which drop the results after the missing sum, NAK too, but the switch
     * holds those ranks' packets and passes their NAKs on as ACKs (docs/switch.md, rule 9), so
     * they do not go back N for another rank's loss, where without the rule every rank did.
     */
    @ParameterizedTest(name = "seed={0}")
    @CsvSource({"511", "512"})
    void oneRanksLossMakesOnlyThatRankGoBackN(long seed) throws Exception {
        Assumptions.assumeTrue(softAvailable(), "the soft verbs provider is not on the class path yet");
        int p = 4;
        int lossy = 1;
        run(p, seed, 16 + (int) (seed % 2), r -> new FaultPlan[] {
                r == lossy ? FaultPlan.loss(seed, 0.05) : FaultPlan.NONE, FaultPlan.NONE}, (ranks, c) -> {
            long ownNaks = ranks.get(lossy).next.counters().get(io.netreduce.verbs.Counter.NAKS_RECEIVED);
            long otherNaks = 0;
            StringBuilder all = new StringBuilder();
            for (Rank r : ranks) {
                if (r.rank != lossy) {
                    otherNaks += r.next.counters().get(io.netreduce.verbs.Counter.NAKS_RECEIVED);
                }
                all.append("\n rank ").append(r.rank).append(" next ").append(r.next.counters());
            }
            assertTrue(ownNaks > 0, "seed " + seed + ": the lossy rank must have been NAKed" + all);
            assertTrue(c.get(Counter.NAKS_ABSORBED) > 0, "seed " + seed + ": no NAK was absorbed" + all);
            // Without the rule every receiver's NAK reaches its sender: the others get about
            // three times the lossy rank's (P - 1). A NAK may still pass when the lost packet's
            // retransmission completes the sum while the NAK is on its way.
            assertTrue(otherNaks <= ownNaks, "seed " + seed + ": the other ranks were NAKed " + otherNaks
                    + " times for the lossy rank's " + ownNaks + all);
        });
    }

    /** What a test checks once every rank holds the right sum. */
    private interface Check {
        void check(List<Rank> ranks, io.netreduce.netswitch.engine.SwitchCounters counters);
    }

    private static void run(int p, long seed, int subnet, java.util.function.IntFunction<FaultPlan[]> faults,
                            Check check) throws Exception {
        int net = (127 << 24) | (91 << 16) | (subnet << 8);
        try (SwitchServer server = SwitchServer.start(new InetSocketAddress(inet(net | 100), 0),
                new InetSocketAddress("127.0.0.1", 0), 128L << 20)) {
            List<Rank> ranks = new ArrayList<>();
            try {
                for (int r = 0; r < p; r++) {
                    FaultPlan[] f = faults.apply(r);
                    ranks.add(new Rank(r, inet(net | (10 + r)), server.dataAddress(), f[0], f[1]));
                }
                for (int r = 0; r < p; r++) {
                    Rank a = ranks.get(r);
                    Rank b = ranks.get((r + 1) % p);
                    a.next.connect(b.prev.localEndpoint(), Duration.ofSeconds(5));
                    b.prev.connect(a.next.localEndpoint(), Duration.ofSeconds(5));
                }
                int ringId = 1000 + p;
                RingStatus created = control(server).createRing(RingSpec.fp32(ringId, p, WINDOW, PAYLOAD, MTU),
                        SwitchRings.connections(ranks.stream().map(r -> r.next).toList(),
                                ranks.stream().map(r -> r.prev).toList()));
                assertEquals("ready", created.state(), created.toString());

                Random rnd = new Random(seed);
                byte[][] originals = new byte[p][];
                for (Rank r : ranks) {
                    ByteBuffer t = r.tensor.buffer().order(ByteOrder.LITTLE_ENDIAN);
                    for (int i = 0; i < MESSAGES * PAYLOAD / 4; i++) {
                        t.putFloat(i * 4, (rnd.nextFloat() - 0.5f) * 1000f);
                    }
                    originals[r.rank] = new byte[MESSAGES * PAYLOAD];
                    t.get(0, originals[r.rank]);
                }
                byte[] expected = referenceSum(originals);

                AtomicReference<Throwable> failure = new AtomicReference<>();
                List<Thread> threads = new ArrayList<>();
                for (Rank r : ranks) {
                    Thread t = new Thread(() -> {
                        try {
                            allReduce(r, ringId, p);
                        } catch (Throwable e) {
                            failure.compareAndSet(null, e);
                        }
                    }, "rank-" + r.rank);
                    t.start();
                    threads.add(t);
                }
                for (Thread t : threads) {
                    t.join(150_000);
                }
                if (failure.get() != null) {
                    throw new AssertionError("seed " + seed + ": a rank failed; switch " + describe(server), failure.get());
                }
                for (Rank r : ranks) {
                    byte[] got = new byte[MESSAGES * PAYLOAD];
                    r.tensor.buffer().get(0, got);
                    assertArrayEquals(expected, got, () -> "seed " + seed + ": rank " + r.rank + " result; switch "
                            + describe(server));
                }
                var c = server.engine().counters();
                assertEquals(MESSAGES, c.get(Counter.MESSAGES_COMPLETED), "seed " + seed);
                assertTrue(c.get(Counter.NON_DATA_FORWARDS) > 0, "ACKs must flow back through the switch");
                check.check(ranks, c);
            } finally {
                for (Rank r : ranks) {
                    r.close();
                }
            }
        }
    }

    private static String describe(SwitchServer server) {
        var c = server.engine().counters();
        StringBuilder b = new StringBuilder();
        for (Counter k : Counter.values()) {
            b.append(k.name().toLowerCase(java.util.Locale.ROOT)).append('=').append(c.get(k)).append(' ');
        }
        for (io.netreduce.netswitch.engine.DropReason d : io.netreduce.netswitch.engine.DropReason.values()) {
            if (c.drops(d) > 0) {
                b.append("drop_").append(d.label()).append('=').append(c.drops(d)).append(' ');
            }
        }
        return b.append(server.engine().rings()).toString();
    }

    /** The NetReduce host loop for one rank: window of N messages, message i+N after result i. */
    private static SwitchControlClient control(SwitchServer server) {
        return new SwitchControlClient(URI.create("http://127.0.0.1:" + server.controlAddress().getPort()),
                Duration.ofSeconds(10));
    }

    private static void allReduce(Rank r, int ringId, int p) throws InterruptedException {
        InaHeader ina = new InaHeader();
        for (int i = 0; i < MESSAGES; i++) {
            ina.wrap(r.sendHeaders.buffer(), i * InaHeader.LENGTH)
                    .set(InaHeader.DTYPE_FP32, r.rank, ringId, i, PAYLOAD, i);
            RecvRequest recv = new RecvRequest(2).wrId(i);
            recv.sgl().add(r.recvHeaders, i * InaHeader.LENGTH, InaHeader.LENGTH).add(r.tensor, i * PAYLOAD, PAYLOAD);
            r.prev.postRecv(recv);
        }
        int sent = 0;
        for (; sent < WINDOW; sent++) {
            postSend(r, sent);
        }
        WorkCompletion[] wcs = new WorkCompletion[16];
        for (int i = 0; i < wcs.length; i++) {
            wcs[i] = new WorkCompletion();
        }
        int received = 0;
        int sendsDone = 0;
        long deadline = System.nanoTime() + 120_000_000_000L;
        while ((received < MESSAGES || sendsDone < MESSAGES) && System.nanoTime() < deadline) {
            int n = r.recvCq.poll(wcs, Duration.ofMillis(5));
            for (int k = 0; k < n; k++) {
                WorkCompletion wc = wcs[k];
                if (!wc.status().isSuccess()) {
                    throw new AssertionError("rank " + r.rank + " receive failed: " + wc);
                }
                int msg = (int) wc.wrId();
                if (msg != received) {
                    throw new AssertionError("rank " + r.rank + " got result " + msg + ", expected " + received);
                }
                InaHeader h = new InaHeader().wrap(r.recvHeaders.buffer(), msg * InaHeader.LENGTH);
                int predecessor = (r.rank + p - 1) % p;
                if (h.msgId() != msg || h.ringId() != ringId || h.payloadLength() != PAYLOAD || h.rank() != predecessor
                        || !h.isResult() || h.contributions() != p) {
                    throw new AssertionError("rank " + r.rank + " result header " + h + " for message " + msg);
                }
                received++;
                if (sent < MESSAGES) {
                    postSend(r, sent++);
                }
            }
            int s = r.sendCq.poll(wcs, Duration.ZERO);
            for (int k = 0; k < s; k++) {
                if (!wcs[k].status().isSuccess()) {
                    throw new AssertionError("rank " + r.rank + " send failed: " + wcs[k]);
                }
                sendsDone++;
            }
        }
        if (received < MESSAGES || sendsDone < MESSAGES) {
            throw new AssertionError("rank " + r.rank + " timed out: " + received + " results, " + sendsDone
                    + " sends completed of " + MESSAGES);
        }
    }

    private static void postSend(Rank r, int i) {
        SendRequest send = new SendRequest(2).wrId(i);
        send.sgl().add(r.sendHeaders, i * InaHeader.LENGTH, InaHeader.LENGTH).add(r.tensor, i * PAYLOAD, PAYLOAD);
        r.next.postSend(send);
    }

    private static byte[] referenceSum(byte[][] tensors) {
        int n = tensors[0].length;
        ByteBuffer out = ByteBuffer.allocate(n).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < n; i += 4) {
            float acc = ByteBuffer.wrap(tensors[0]).order(ByteOrder.LITTLE_ENDIAN).getFloat(i);
            for (int r = 1; r < tensors.length; r++) {
                acc += ByteBuffer.wrap(tensors[r]).order(ByteOrder.LITTLE_ENDIAN).getFloat(i);
            }
            out.putFloat(i, acc);
        }
        return out.array();
    }

    private static InetAddress inet(int ip) {
        try {
            return InetAddress.getByAddress(new byte[] {(byte) (ip >>> 24), (byte) (ip >>> 16), (byte) (ip >>> 8), (byte) ip});
        } catch (java.net.UnknownHostException e) {
            throw new IllegalArgumentException(e);
        }
    }
}
