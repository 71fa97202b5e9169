package io.netreduce.verbs.soft;

import io.netreduce.wire.roce.RoceAddressing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netreduce.verbs.Access;
import io.netreduce.verbs.Counter;
import io.netreduce.verbs.DeviceOptions;
import io.netreduce.verbs.FaultPlan;
import io.netreduce.verbs.MemoryRegion;
import io.netreduce.verbs.QpAttributes;
import io.netreduce.verbs.QpState;
import io.netreduce.verbs.QueuePair;
import io.netreduce.verbs.RecvRequest;
import io.netreduce.verbs.SendOpcode;
import io.netreduce.verbs.SendRequest;
import io.netreduce.verbs.VerbsException;
import io.netreduce.verbs.WcStatus;
import io.netreduce.verbs.WorkCompletion;
import io.netreduce.verbs.CompletionQueue;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.io.IOException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** RNR, retry exhaustion, fatal NAKs, the error state, the gateway option and device-level drops. */
class SoftReliabilityTest {
    private static final long MIB = 1 << 20;
    private SoftPair pair;
    private final List<AutoCloseable> closeables = new ArrayList<>();

    @AfterEach
    void close() throws Exception {
        if (pair != null) {
            pair.close();
        }
        for (AutoCloseable c : closeables) {
            c.close();
        }
    }

    private static DeviceOptions.Builder host(String address) {
        return DeviceOptions.builder().localAddress(address);
    }

    /** Polls until {@code count} completions arrived or the deadline passed. */
    private static List<WorkCompletion> await(CompletionQueue cq, int count, Duration deadline) throws InterruptedException {
        List<WorkCompletion> out = new ArrayList<>();
        long end = System.nanoTime() + deadline.toNanos();
        WorkCompletion[] wcs = new WorkCompletion[16];
        while (out.size() < count && System.nanoTime() < end) {
            int n = cq.poll(wcs, Duration.ofMillis(20));
            for (int i = 0; i < n; i++) {
                out.add(new WorkCompletion().copyFrom(wcs[i]));
            }
        }
        return out;
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void receivesPostedLateGoThroughTheRnrPath() throws InterruptedException {
        long seed = 21;
        pair = new SoftPair(host("127.0.32.1"), host("127.0.32.2"),
                q -> q.ackTimeout(Duration.ofMillis(500)).minRnrTimer(Duration.ofMillis(10)).rnrRetry(7));
        Transfer t = new Transfer(pair, seed, 5000);
        t.recvDelay = Duration.ofMillis(300);
        t.run(4 * MIB, Duration.ofSeconds(45));
        assertTrue(pair.b.qp.counters().get(Counter.RNR_NAKS_SENT) > 0, "seed " + seed + ": " + pair.b.qp.counters());
        assertTrue(pair.a.qp.counters().get(Counter.RNR_NAKS_RECEIVED) > 0, "seed " + seed);
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void rnrRetriesRunOutWithRnrRetryExceeded() throws InterruptedException {
        pair = new SoftPair(host("127.0.32.3"), host("127.0.32.4"),
                q -> q.minRnrTimer(Duration.ofMillis(10)).rnrRetry(2));
        MemoryRegion src = pair.a.register(4096);
        SendRequest s = new SendRequest();
        s.wrId(5).sgl().add(src, 0, 100);
        pair.a.qp.postSend(s);
        List<WorkCompletion> wcs = await(pair.a.sendCq, 1, Duration.ofSeconds(10));
        assertEquals(1, wcs.size(), "completion expected; counters " + pair.a.qp.counters());
        assertEquals(WcStatus.RNR_RETRY_EXC_ERR, wcs.get(0).status(), wcs.get(0).toString());
        assertEquals(QpState.ERROR, pair.a.qp.state());
        // The first try and two RNR retries each drew an RNR NAK (an ACK-timer retransmission
        // in a stalled moment may draw one more).
        assertTrue(pair.a.qp.counters().get(Counter.RNR_NAKS_RECEIVED) >= 3, pair.a.qp.counters().toString());
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void vanishedPeerEndsInRetryExceededThenEverythingIsFlushed() throws InterruptedException {
        Duration ackTimeout = Duration.ofMillis(50);
        int retries = 3;
        pair = new SoftPair(host("127.0.32.5"), host("127.0.32.6"), q -> q.ackTimeout(ackTimeout).retryCount(retries));
        MemoryRegion src = pair.a.register(1 << 16);
        pair.b.device.close(); // the peer vanishes: its socket is gone, nothing answers
        long start = System.nanoTime();
        SendRequest s = new SendRequest();
        for (int i = 0; i < 4; i++) {
            s.reset().wrId(i).sgl().add(src, 0, 3000);
            pair.a.qp.postSend(s);
        }
        List<WorkCompletion> wcs = await(pair.a.sendCq, 4, Duration.ofSeconds(10));
        long elapsedMs = (System.nanoTime() - start) / 1_000_000;
        assertEquals(4, wcs.size(), "every request completes: " + wcs);
        assertEquals(WcStatus.RETRY_EXC_ERR, wcs.get(0).status(), wcs.toString());
        for (int i = 1; i < 4; i++) {
            assertEquals(WcStatus.WR_FLUSH_ERR, wcs.get(i).status(), wcs.toString());
            assertEquals(i, wcs.get(i).wrId());
        }
        long budget = ackTimeout.toMillis() * (retries + 1);
        assertTrue(elapsedMs >= budget - 5, "gave up after " + elapsedMs + " ms, before the " + budget + " ms budget");
        assertTrue(elapsedMs < budget + 2000, "gave up after " + elapsedMs + " ms; budget " + budget + " ms");
        assertEquals(QpState.ERROR, pair.a.qp.state());
        assertEquals(retries, pair.a.qp.counters().get(Counter.ACK_TIMEOUTS) - 1, pair.a.qp.counters().toString());

        // Later work is accepted and flushed, as ibverbs does, instead of throwing.
        s.reset().wrId(99).sgl().add(src, 0, 10);
        pair.a.qp.postSend(s);
        RecvRequest r = new RecvRequest().wrId(77);
        r.sgl().add(src, 0, 100);
        pair.a.qp.postRecv(r);
        List<WorkCompletion> later = await(pair.a.sendCq, 1, Duration.ofSeconds(5));
        assertEquals(1, later.size());
        assertEquals(99, later.get(0).wrId());
        assertEquals(WcStatus.WR_FLUSH_ERR, later.get(0).status());
        List<WorkCompletion> recv = await(pair.a.recvCq, 1, Duration.ofSeconds(5));
        assertEquals(1, recv.size());
        assertEquals(77, recv.get(0).wrId());
        assertEquals(WcStatus.WR_FLUSH_ERR, recv.get(0).status());
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void writeWithBadRkeyIsARemoteAccessError() throws InterruptedException {
        pair = new SoftPair(host("127.0.32.7"), host("127.0.32.8"), q -> q);
        MemoryRegion src = pair.a.register(4096);
        MemoryRegion dst = pair.b.register(4096);
        SendRequest s = new SendRequest();
        s.wrId(1).opcode(SendOpcode.RDMA_WRITE).remote(dst.address(), dst.rkey() ^ 0x100).sgl().add(src, 0, 64);
        pair.a.qp.postSend(s);
        List<WorkCompletion> wcs = await(pair.a.sendCq, 1, Duration.ofSeconds(10));
        assertEquals(WcStatus.REM_ACCESS_ERR, wcs.get(0).status(), wcs.toString());
        assertEquals(QpState.ERROR, pair.a.qp.state());
        assertEquals(QpState.ERROR, pair.b.qp.state());

        // Out of range with the right key is refused too (fresh pair).
        pair.close();
        pair = new SoftPair(host("127.0.32.9"), host("127.0.32.10"), q -> q);
        src = pair.a.register(4096);
        dst = pair.b.register(4096);
        s.reset().wrId(2).opcode(SendOpcode.RDMA_WRITE).remote(dst.address() + 4090, dst.rkey()).sgl().add(src, 0, 64);
        pair.a.qp.postSend(s);
        wcs = await(pair.a.sendCq, 1, Duration.ofSeconds(10));
        assertEquals(WcStatus.REM_ACCESS_ERR, wcs.get(0).status(), wcs.toString());
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void rdmaWriteLandsAtTheRemoteAddressWithoutConsumingAReceive() throws InterruptedException {
        pair = new SoftPair(host("127.0.32.11"), host("127.0.32.12"), q -> q.mtu(256));
        MemoryRegion src = pair.a.register(8192);
        MemoryRegion dst = pair.b.register(8192);
        ByteBuffer sb = src.buffer();
        for (int i = 0; i < 8192; i++) {
            sb.put(i, (byte) (i * 31 + 7));
        }
        SendRequest s = new SendRequest();
        s.wrId(3).opcode(SendOpcode.RDMA_WRITE).remote(dst.address() + 1000, dst.rkey()).sgl().add(src, 17, 3001);
        pair.a.qp.postSend(s);
        List<WorkCompletion> wcs = await(pair.a.sendCq, 1, Duration.ofSeconds(10));
        assertEquals(WcStatus.SUCCESS, wcs.get(0).status(), wcs.toString());
        assertEquals(3001, wcs.get(0).byteLength());
        assertEquals(-1, sb.slice(17, 3001).mismatch(dst.buffer().slice(1000, 3001)));
        assertEquals(0, dst.buffer().get(999));
        assertEquals(0, dst.buffer().get(4001));
        assertEquals(0, pair.b.recvCq.poll(new WorkCompletion[1]), "plain WRITE completes nothing at the responder");
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void sendLongerThanTheReceiveIsALengthError() throws InterruptedException {
        pair = new SoftPair(host("127.0.32.13"), host("127.0.32.14"), q -> q);
        MemoryRegion src = pair.a.register(8192);
        MemoryRegion dst = pair.b.register(8192);
        RecvRequest r = new RecvRequest().wrId(8);
        r.sgl().add(dst, 0, 1000);
        pair.b.qp.postRecv(r);
        SendRequest s = new SendRequest();
        s.wrId(4).sgl().add(src, 0, 3000);
        pair.a.qp.postSend(s);
        List<WorkCompletion> rw = await(pair.b.recvCq, 1, Duration.ofSeconds(10));
        assertEquals(WcStatus.LOC_LEN_ERR, rw.get(0).status(), rw.toString());
        List<WorkCompletion> sw = await(pair.a.sendCq, 1, Duration.ofSeconds(10));
        assertEquals(WcStatus.REM_INV_REQ_ERR, sw.get(0).status(), sw.toString());
    }

    /**
     * What a test relay does with each datagram ({@code length} bytes of {@code buf} from
     * {@code from}), and every few milliseconds without one ({@code from} null).
     */
    private interface RelayStep {
        void on(DatagramSocket relay, byte[] buf, int length, InetAddress from) throws IOException;
    }

    /**
     * A relay on {@code address}'s RoCEv2 port, run by a daemon thread until the test ends;
     * returns it as the gateway for the devices.
     */
    private InetSocketAddress relay(String address, RelayStep step) throws IOException {
        InetSocketAddress at = new InetSocketAddress(InetAddress.getByName(address), RoceAddressing.UDP_PORT);
        DatagramSocket relay = new DatagramSocket(at);
        relay.setSoTimeout(5);
        closeables.add(relay);
        Thread t = new Thread(() -> {
            byte[] buf = new byte[70_000];
            DatagramPacket p = new DatagramPacket(buf, buf.length);
            while (!relay.isClosed()) {
                try {
                    p.setData(buf);
                    try {
                        relay.receive(p);
                    } catch (SocketTimeoutException e) {
                        step.on(relay, buf, 0, null);
                        continue;
                    }
                    step.on(relay, buf, p.getLength(), p.getAddress());
                } catch (Exception e) {
                    return;
                }
            }
        }, "test-relay");
        t.setDaemon(true);
        t.start();
        closeables.add(() -> t.join(2000));
        return at;
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void gatewayRelaysEveryDatagramAndIcrcStillVerifies() throws Exception {
        InetSocketAddress aAddr = new InetSocketAddress("127.0.32.21", RoceAddressing.UDP_PORT);
        InetSocketAddress bAddr = new InetSocketAddress("127.0.32.22", RoceAddressing.UDP_PORT);
        AtomicLong forwarded = new AtomicLong();
        // The relay routes by the sender's address (each emulated host has its own) and sends
        // from its own socket, so receivers never see the original source address or port.
        InetSocketAddress gw = relay("127.0.32.20", (relay, buf, length, from) -> {
            if (from != null) {
                relay.send(new DatagramPacket(buf, length, from.equals(aAddr.getAddress()) ? bAddr : aAddr));
                forwarded.incrementAndGet();
            }
        });
        pair = new SoftPair(host("127.0.32.21").gateway(gw), host("127.0.32.22").gateway(gw),
                q -> q.ackTimeout(Duration.ofMillis(300)));
        Transfer tr = new Transfer(pair, 23, 4000);
        tr.run(2 * MIB, Duration.ofSeconds(40));
        assertTrue(forwarded.get() >= pair.a.qp.counters().get(Counter.PACKETS_SENT), "all traffic went via the relay");
        assertEquals(0, pair.b.qp.counters().get(Counter.DROP_BAD_ICRC));
        assertEquals(0, pair.a.qp.counters().get(Counter.DROP_BAD_ICRC));
    }

    /**
     * A relay between two devices drops data packet 10 of a 256-packet SEND once. The
     * receiver NAKs it; from the moment the relay passes the NAK on it holds every packet
     * from the receiver back for 300 ms, so the sender hears nothing more and sends what its
     * window allows from packet 10. With 128 PSNs allowed before the loss, that is 32 after
     * it: the go-back-N resend goes out in the window after a loss. Then the relay lets everything
     * through and the message arrives intact.
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aLossShrinksTheWindowForTheResend() throws Exception {
        int maxOutstanding = 128;
        int lost = 10;
        InetSocketAddress aAddr = new InetSocketAddress("127.0.32.34", RoceAddressing.UDP_PORT);
        InetSocketAddress bAddr = new InetSocketAddress("127.0.32.35", RoceAddressing.UDP_PORT);
        long holdNanos = TimeUnit.MILLISECONDS.toNanos(300);
        int[] highestResent = {-1};
        InetSocketAddress gw = relay("127.0.32.33", new RelayStep() {
            final List<byte[]> held = new ArrayList<>();
            int firstPsn = -1;
            boolean dropped;
            boolean resending;
            long holdUntil;

            @Override
            public void on(DatagramSocket relay, byte[] buf, int length, InetAddress from) throws IOException {
                if (holdUntil > 0 && System.nanoTime() - holdUntil >= 0) {
                    holdUntil = -1; // over: what was held goes on, and from now on everything
                    for (byte[] h : held) {
                        relay.send(new DatagramPacket(h, h.length, aAddr));
                    }
                    held.clear();
                }
                if (from == null) {
                    return;
                }
                int psn = ByteBuffer.wrap(buf).getInt(8) & 0xFFFFFF;
                if (from.equals(aAddr.getAddress())) {
                    firstPsn = firstPsn < 0 ? psn : firstPsn;
                    int index = (psn - firstPsn) & 0xFFFFFF;
                    if (index == lost && !dropped) {
                        dropped = true;
                        return;
                    }
                    // The go-back-N starts with the lost packet; the sender's originals before
                    // it may still reach the relay after the NAK went by.
                    resending |= holdUntil > 0 && index == lost;
                    if (holdUntil > 0 && resending) {
                        highestResent[0] = Math.max(highestResent[0], index);
                    }
                    relay.send(new DatagramPacket(buf, length, bAddr));
                } else if (holdUntil > 0) {
                    held.add(java.util.Arrays.copyOf(buf, length));
                } else {
                    relay.send(new DatagramPacket(buf, length, aAddr));
                    boolean nak = (buf[0] & 0xFF) == 0x11 && (buf[12] & 0xFF) == 0x60;
                    if (nak && holdUntil == 0) {
                        holdUntil = System.nanoTime() + holdNanos;
                    }
                }
            }
        });
        pair = new SoftPair(host("127.0.32.34").gateway(gw)
                .property(SoftProperties.MAX_OUTSTANDING_PSNS, Integer.toString(maxOutstanding)),
                host("127.0.32.35").gateway(gw), q -> q.mtu(1024).ackTimeout(Duration.ofSeconds(2)));
        int packets = 256;
        MemoryRegion src = pair.a.register(packets * 1024);
        MemoryRegion dst = pair.b.register(packets * 1024);
        for (int i = 0; i < packets * 1024; i++) {
            src.buffer().put(i, (byte) (i * 7 + i / 1024));
        }
        RecvRequest r = new RecvRequest();
        r.reset().wrId(1).sgl().add(dst, 0, packets * 1024);
        pair.b.qp.postRecv(r);
        SendRequest s = new SendRequest();
        s.reset().wrId(1).sgl().add(src, 0, packets * 1024);
        pair.a.qp.postSend(s);
        List<WorkCompletion> sent = await(pair.a.sendCq, 1, Duration.ofSeconds(30));
        assertEquals(1, sent.size(), pair.a.qp.counters().toString());
        assertEquals(WcStatus.SUCCESS, sent.get(0).status(), sent.get(0).toString());
        assertEquals(1, await(pair.b.recvCq, 1, Duration.ofSeconds(10)).size());
        for (int i = 0; i < packets * 1024; i++) {
            assertEquals((byte) (i * 7 + i / 1024), dst.buffer().get(i), "byte " + i);
        }
        assertEquals(lost + Requester.WINDOW_AFTER_LOSS - 1, highestResent[0],
                "while the receiver was silent after its NAK, the sender sent packets " + lost + ".." + highestResent[0]
                        + ": the window after a loss; " + pair.a.qp.counters());
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void devicesCountMalformedAndUnknownQueuePairDatagrams() throws Exception {
        pair = new SoftPair(host("127.0.32.23"), host("127.0.32.24"), q -> q);
        try (DatagramSocket raw = new DatagramSocket(new InetSocketAddress("127.0.32.25", 0xC100))) {
            InetSocketAddress to = new InetSocketAddress("127.0.32.24", RoceAddressing.UDP_PORT);
            raw.send(new DatagramPacket(new byte[] {1, 2, 3}, 3, to));
            byte[] ack = new byte[20];
            ack[0] = 0x11;
            ack[2] = (byte) 0xFF;
            ack[3] = (byte) 0xFF;
            ack[7] = 0x7F; // DestQP 0x7F: no such queue pair
            raw.send(new DatagramPacket(ack, ack.length, to));
            ack[7] = (byte) pair.b.qp.qpn(); // a real QP, but the ICRC is garbage
            raw.send(new DatagramPacket(ack, ack.length, to));
        }
        long end = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (System.nanoTime() < end && (pair.b.device.counters().get(Counter.DROP_MALFORMED) < 1
                || pair.b.device.counters().get(Counter.DROP_UNKNOWN_QP) < 1
                || pair.b.qp.counters().get(Counter.DROP_BAD_ICRC) < 1)) {
            Thread.sleep(10);
        }
        assertEquals(1, pair.b.device.counters().get(Counter.DROP_MALFORMED), pair.b.device.counters().toString());
        assertEquals(1, pair.b.device.counters().get(Counter.DROP_UNKNOWN_QP), pair.b.device.counters().toString());
        assertEquals(1, pair.b.qp.counters().get(Counter.DROP_BAD_ICRC), pair.b.qp.counters().toString());
        assertEquals(QpState.READY, pair.b.qp.state(), "bad packets are dropped silently");
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void misuseFailsWithClearExceptions() {
        SoftPair.Host h = new SoftPair.Host(host("127.0.32.26").build());
        closeables.add(h);
        VerbsException heap = assertThrows(VerbsException.class,
                () -> h.pd.register(ByteBuffer.allocate(64), EnumSet.of(Access.LOCAL_WRITE)));
        assertTrue(heap.getMessage().contains("heap"), heap.getMessage());
        QueuePair qp = h.createQp(q -> q);
        MemoryRegion mr = h.register(64);
        SendRequest s = new SendRequest();
        s.sgl().add(mr, 0, 8);
        VerbsException notConnected = assertThrows(VerbsException.class, () -> qp.postSend(s));
        assertTrue(notConnected.getMessage().contains("not connected"), notConnected.getMessage());
        assertNotNull(qp.localEndpoint());
        assertEquals(RoceAddressing.sourcePort(qp.qpn()) & RoceAddressing.SOURCE_PORT_BASE, RoceAddressing.SOURCE_PORT_BASE);
        VerbsException taken = assertThrows(VerbsException.class, () -> new SoftPair.Host(host("127.0.32.26").build()),
                "a second device on the same address and port cannot bind");
        assertTrue(taken.getMessage().contains("127.0.32.26:") && taken.getMessage().contains("NETREDUCE_LOCAL_ADDR"),
                "the message names the address and what to do: " + taken.getMessage());
        assertThrows(IllegalArgumentException.class, () -> QpAttributes.builder(h.sendCq, h.recvCq).mtu(1000).build());
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void ingressFaultsAreSurvivedToo() throws InterruptedException {
        long seed = 24;
        pair = new SoftPair(host("127.0.32.27").ingressFaults(new FaultPlan(seed, 0.03, 0.03, 0.03, 0.02)),
                host("127.0.32.28").ingressFaults(new FaultPlan(seed + 1, 0.03, 0.03, 0.03, 0.02)),
                q -> q.ackTimeout(Duration.ofMillis(300)));
        Transfer t = new Transfer(pair, seed, 6000);
        t.run(4 * MIB, Duration.ofSeconds(50));
        assertTrue(pair.b.device.counters().get(Counter.INJECTED_LOSS) > 0, "seed " + seed);
    }

    /**
     * One-packet messages sent one at a time over an egress losing 20 % of packets (data and
     * ACKs): every loss is a lost tail with nothing after it for the responder to NAK. Tail
     * probes recover each in milliseconds, so with a 5 s ACK timeout not one timeout expires;
     * with probes turned off (and a 200 ms timeout, to keep the run short) the same traffic
     * waits for the timer, which shows the probes did the work.
     */
    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void tailProbesRecoverLostTailsWithoutWaitingForTheAckTimeout() throws InterruptedException {
        long seed = 25;
        int messages = 40;
        pair = lossyPair("127.0.32.29", "127.0.32.30", seed, null, Duration.ofSeconds(5));
        sendOneAtATime(messages, Duration.ofSeconds(60), seed);
        assertEquals(0, pair.a.qp.counters().get(Counter.ACK_TIMEOUTS), "seed " + seed + ": " + pair.a.qp.counters());
        assertTrue(pair.a.qp.counters().get(Counter.TAIL_PROBES) > 0, "seed " + seed + ": " + pair.a.qp.counters());
        assertTrue(pair.a.device.counters().get(Counter.INJECTED_LOSS) + pair.b.device.counters().get(Counter.INJECTED_LOSS)
                > 0, "seed " + seed);
        pair.close();

        pair = lossyPair("127.0.32.31", "127.0.32.32", seed, "0", Duration.ofMillis(200));
        sendOneAtATime(messages, Duration.ofSeconds(60), seed);
        assertTrue(pair.a.qp.counters().get(Counter.ACK_TIMEOUTS) > 0,
                "without probes a lost tail waits for the ACK timeout; seed " + seed + ": " + pair.a.qp.counters());
        assertEquals(0, pair.a.qp.counters().get(Counter.TAIL_PROBES));
    }

    private static SoftPair lossyPair(String a, String b, long seed, String tailProbeMicros, Duration ackTimeout) {
        DeviceOptions.Builder ha = host(a).egressFaults(FaultPlan.loss(seed, 0.2));
        DeviceOptions.Builder hb = host(b).egressFaults(FaultPlan.loss(seed + 1, 0.2));
        if (tailProbeMicros != null) {
            ha.property(SoftProperties.TAIL_PROBE_MICROS, tailProbeMicros);
        }
        return new SoftPair(ha, hb, q -> q.ackTimeout(ackTimeout).retryCount(7));
    }

    /** Sends {@code messages} SENDs of 64 bytes, each after the previous one completed, and checks each arrived intact. */
    private void sendOneAtATime(int messages, Duration deadline, long seed) throws InterruptedException {
        MemoryRegion src = pair.a.register(64);
        MemoryRegion dst = pair.b.register(64 * messages);
        RecvRequest r = new RecvRequest();
        for (int i = 0; i < messages; i++) {
            r.reset().wrId(i).sgl().add(dst, 64 * i, 64);
            pair.b.qp.postRecv(r);
        }
        SendRequest s = new SendRequest();
        long end = System.nanoTime() + deadline.toNanos();
        for (int i = 0; i < messages; i++) {
            for (int k = 0; k < 64; k++) {
                src.buffer().put(k, (byte) (i * 31 + k));
            }
            s.reset().wrId(i).sgl().add(src, 0, 64);
            pair.a.qp.postSend(s);
            List<WorkCompletion> sent = await(pair.a.sendCq, 1, Duration.ofNanos(Math.max(1, end - System.nanoTime())));
            assertEquals(1, sent.size(), "message " + i + " not acknowledged; seed " + seed + ": " + pair.a.qp.counters());
            assertEquals(WcStatus.SUCCESS, sent.get(0).status(), sent.get(0).toString());
        }
        List<WorkCompletion> got = await(pair.b.recvCq, messages, Duration.ofSeconds(10));
        assertEquals(messages, got.size(), "seed " + seed);
        for (int i = 0; i < messages; i++) {
            for (int k = 0; k < 64; k++) {
                assertEquals((byte) (i * 31 + k), dst.buffer().get(64 * i + k), "message " + i + " byte " + k);
            }
        }
    }
}
