package io.netreduce.verbs.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.netreduce.verbs.Access;
import io.netreduce.verbs.CompletionQueue;
import io.netreduce.verbs.Counter;
import io.netreduce.verbs.Device;
import io.netreduce.verbs.DeviceOptions;
import io.netreduce.verbs.MemoryRegion;
import io.netreduce.verbs.ProtectionDomain;
import io.netreduce.verbs.QpAttributes;
import io.netreduce.verbs.QpEndpoint;
import io.netreduce.verbs.QpState;
import io.netreduce.verbs.QueuePair;
import io.netreduce.verbs.RecvRequest;
import io.netreduce.verbs.SendRequest;
import io.netreduce.verbs.Verbs;
import io.netreduce.verbs.VerbsException;
import io.netreduce.verbs.WcStatus;
import io.netreduce.verbs.WorkCompletion;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.EnumSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** TCP-provider specifics the conformance suite does not cover: connection set-up and the hot path. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class TcpQueuePairTest {

    private static Device open(String address) {
        return Verbs.open("tcp", DeviceOptions.builder().localAddress(address).port(0).build());
    }

    private static Device open(String address, TcpProgress progress) {
        return Verbs.open("tcp", DeviceOptions.builder().localAddress(address).port(0)
                .property(TcpVerbsProvider.PROGRESS, progress.name()).build());
    }

    private static QueuePair qp(Device d) {
        CompletionQueue cq = d.createCompletionQueue(4096);
        return d.allocateProtectionDomain().createQueuePair(QpAttributes.builder(cq, cq).build());
    }

    private static int freePort(String address) throws Exception {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName(address))) {
            return s.getLocalPort();
        }
    }

    @Test
    void dialingANonListeningPeerFailsAtTheDeadlineNamingThePeer() throws Exception {
        try (Device d = open("127.0.0.10")) {
            QueuePair qp = qp(d);
            QpEndpoint nobody = new QpEndpoint(InetAddress.getByName("127.0.0.99"), freePort("127.0.0.99"), 5, 0);
            long start = System.nanoTime();
            VerbsException e = assertThrows(VerbsException.class, () -> qp.connect(nobody, Duration.ofMillis(300)));
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertTrue(e.getMessage().contains(nobody.toString()) && e.getMessage().contains("dial"), e.getMessage());
            assertTrue(ms >= 290 && ms < 3_000, "gave up after " + ms + " ms");
            assertEquals(QpState.INIT, qp.state(), "a failed connect leaves the QP usable");
        }
    }

    @Test
    void waitingForAPeerThatNeverDialsFailsAtTheDeadlineNamingThePeer() throws Exception {
        try (Device d = open("127.0.0.10")) {
            QueuePair qp = qp(d);
            // A lower address than ours: the peer would dial, so we wait to accept.
            QpEndpoint silent = new QpEndpoint(InetAddress.getByName("127.0.0.2"), 40000, 5, 0);
            long start = System.nanoTime();
            VerbsException e = assertThrows(VerbsException.class, () -> qp.connect(silent, Duration.ofMillis(300)));
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertTrue(e.getMessage().contains(silent.toString()) && e.getMessage().contains("accept"), e.getMessage());
            assertTrue(ms >= 290 && ms < 3_000, "gave up after " + ms + " ms");
        }
    }

    @Test
    void connectingToAnUnknownQueuePairIsRejectedAtOnce() throws Exception {
        try (Device a = open("127.0.0.10"); Device b = open("127.0.0.20")) {
            QueuePair qp = qp(a);
            qp(b);
            QpEndpoint ghost = new QpEndpoint(InetAddress.getByName("127.0.0.20"),
                    ((TcpDevice) b).boundAddress().getPort(), 999, 0);
            long start = System.nanoTime();
            VerbsException e = assertThrows(VerbsException.class, () -> qp.connect(ghost, Duration.ofSeconds(10)));
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertTrue(e.getMessage().contains("rejected") && e.getMessage().contains("no such queue pair"), e.getMessage());
            assertTrue(ms < 5_000, "rejection took " + ms + " ms");
            assertEquals(1, b.counters().get(Counter.DROP_UNKNOWN_QP));
        }
    }

    @Test
    void queuePairsOfOneDeviceConnectToEachOtherInEitherOrder() throws Exception {
        try (Device d = open("127.0.0.10")) {
            QueuePair x = qp(d);
            QueuePair y = qp(d);
            // The acceptor (higher QPN) connects first and waits; the dialer follows later.
            CompletableFuture<Void> acceptor = CompletableFuture.runAsync(() -> y.connect(x.localEndpoint(), Duration.ofSeconds(10)));
            Thread.sleep(100);
            x.connect(y.localEndpoint(), Duration.ofSeconds(10));
            acceptor.get(10, TimeUnit.SECONDS);
            assertEquals(QpState.READY, x.state());
            assertEquals(QpState.READY, y.state());
            assertEquals(y.localEndpoint(), x.remoteEndpoint());
        }
    }

    @Test
    void garbageOnTheListeningPortIsDroppedAndCounted() throws Exception {
        try (Device d = open("127.0.0.10")) {
            int port = ((TcpDevice) d).boundAddress().getPort();
            try (Socket s = new Socket(InetAddress.getByName("127.0.0.10"), port)) {
                OutputStream out = s.getOutputStream();
                out.write(new byte[Handshake.LENGTH]);
                out.flush();
                assertEquals(-1, s.getInputStream().read(), "the device closes a connection with a bad handshake");
            }
            assertEquals(1, d.counters().get(Counter.DROP_MALFORMED));
        }
    }

    @Test
    void wildcardAndBusyAddressesAreRefusedWithTheReason() throws Exception {
        VerbsException wildcard = assertThrows(VerbsException.class, () -> open("0.0.0.0"));
        assertTrue(wildcard.getMessage().contains("wildcard"), wildcard.getMessage());
        try (Device d = open("127.0.0.10")) {
            int port = ((TcpDevice) d).boundAddress().getPort();
            VerbsException busy = assertThrows(VerbsException.class, () -> Verbs.open("tcp",
                    DeviceOptions.builder().localAddress("127.0.0.10").port(port).build()));
            assertTrue(busy.getMessage().contains("cannot listen on /127.0.0.10:" + port), busy.getMessage());
        }
    }

    @Test
    void anUnknownProgressModeIsRefusedNamingTheChoices() {
        VerbsException e = assertThrows(VerbsException.class, () -> Verbs.open("tcp",
                DeviceOptions.builder().localAddress("127.0.0.10").port(0).property(TcpVerbsProvider.PROGRESS, "spin").build()));
        assertTrue(e.getMessage().contains("'spin'") && e.getMessage().contains("poll")
                && e.getMessage().contains("threads"), e.getMessage());
    }

    @Test
    void theSpinComesFromTheDeviceOptionAndABadOneIsRefused() {
        for (String bad : new String[] {"-1", "1000001", "fast", "1.5"}) {
            VerbsException e = assertThrows(VerbsException.class, () -> Verbs.open("tcp", DeviceOptions.builder()
                    .localAddress("127.0.0.10").port(0).property(TcpVerbsProvider.SPIN_MICROS, bad).build()));
            assertTrue(e.getMessage().contains("'" + bad + "'") && e.getMessage().contains(TcpVerbsProvider.SPIN_MICROS)
                    && e.getMessage().contains("0 to 1000000"), e.getMessage());
        }
        try (Device d = Verbs.open("tcp", DeviceOptions.builder().localAddress("127.0.0.10").port(0)
                .property(TcpVerbsProvider.SPIN_MICROS, "250").build());
             var cq = (TcpCompletionQueue) d.createCompletionQueue(4)) {
            assertEquals(250_000, cq.spinNanos());
        }
        if (System.getProperty(TcpVerbsProvider.SPIN_MICROS) == null
                && System.getenv(TcpVerbsProvider.SPIN_MICROS_ENVIRONMENT) == null) {
            try (Device d = open("127.0.0.10"); var cq = (TcpCompletionQueue) d.createCompletionQueue(4)) {
                assertEquals(TimeUnit.MICROSECONDS.toNanos(TcpCompletionQueue.DEFAULT_SPIN_MICROS), cq.spinNanos());
            }
        }
    }

    /**
     * The spin adapts: waits much longer than it (an idle peer) halve it, down to the floor;
     * a wait that ends within it (a message right behind) restores it whole. And a device
     * told that more threads poll on this host than it has cores spins yielding the core.
     */
    @Test
    void theSpinHalvesAfterLongWaitsAndComesBackAfterAShortOne() throws Exception {
        // A spin of 1 ms: a wait restores it if it ends within 2 ms, which a poll that finds
        // its completion already in the socket does even on a loaded 2-core machine.
        try (Device a = Verbs.open("tcp", DeviceOptions.builder().localAddress("127.0.0.10").port(0).callerPolls(true)
                .property(TcpVerbsProvider.SPIN_MICROS, "1000").build());
             Device b = open("127.0.0.20", TcpProgress.POLL)) {
            Connected c = Connected.of(a, b, 16);
            TcpCompletionQueue cq = (TcpCompletionQueue) c.cqa;
            WorkCompletion[] wc = {new WorkCompletion()};
            assertEquals(1_000_000, cq.spinBudgetNanos());
            long expected = 1_000_000;
            for (int i = 0; i < 12; i++) {
                // A poll that times out waited at least its timeout, 5 ms: always "much longer".
                assertEquals(0, cq.poll(wc, Duration.ofMillis(5)), "nothing was sent");
                expected = Math.max(TcpCompletionQueue.MIN_SPIN_NANOS, expected / 2);
                assertEquals(expected, cq.spinBudgetNanos(), "after " + (i + 1) + " idle waits of 5 ms");
            }
            assertEquals(TcpCompletionQueue.MIN_SPIN_NANOS, cq.spinBudgetNanos());
            MemoryRegion buf = c.pda.register(ByteBuffer.allocateDirect(64), EnumSet.of(Access.LOCAL_WRITE));
            MemoryRegion dst = c.pdb.register(ByteBuffer.allocateDirect(64), EnumSet.of(Access.LOCAL_WRITE));
            RecvRequest r = new RecvRequest();
            r.sgl().add(dst, 0, 64);
            c.y.postRecv(r.wrId(1));
            SendRequest s = new SendRequest();
            s.sgl().add(buf, 0, 64);
            c.x.postSend(s.wrId(2));
            // Drive the receiver until its receive completes (its ACK leaves with it, as it
            // sends nothing itself), then give loopback time to deliver the ACK to the sender.
            WorkCompletion[] received = {new WorkCompletion()};
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (c.cqb.poll(received) == 0) {
                assertTrue(System.nanoTime() < deadline, "the receive never completed");
                Thread.onSpinWait();
            }
            assertEquals(WcStatus.SUCCESS, received[0].status());
            Thread.sleep(50);
            assertEquals(1, cq.poll(wc, Duration.ofSeconds(10)), "the send's completion");
            assertEquals(WcStatus.SUCCESS, wc[0].status());
            // The ACK was in the socket before this poll began: it waited microseconds.
            assertEquals(1_000_000, cq.spinBudgetNanos(), "the spin after a wait that ended at once");
        }
        try (Device d = Verbs.open("tcp", DeviceOptions.builder().localAddress("127.0.0.10").port(0)
                .hostPollers(Runtime.getRuntime().availableProcessors() + 1).build());
             var cq = (TcpCompletionQueue) d.createCompletionQueue(4);
             Device e = open("127.0.0.10"); var alone = (TcpCompletionQueue) e.createCompletionQueue(4)) {
            assertTrue(cq.yieldsWhileSpinning(), "more pollers than cores");
            assertFalse(alone.yieldsWhileSpinning(), "one poller");
        }
    }

    /**
     * Polled progress: a receiver whose application stops polling (it computes, or sleeps)
     * must not stall its peer for good. The device's fallback drives its socket, so a
     * transfer far larger than the socket buffers completes at the sender, and the data is
     * all there when the receiver polls again.
     */
    @Test
    void aPolledReceiverThatStopsPollingStillReceives() throws Exception {
        int size = 16 << 20; // many times what loopback socket buffers hold
        long seed = 0x9011ED;
        try (Device a = open("127.0.0.10", TcpProgress.POLL); Device b = open("127.0.0.20", TcpProgress.POLL)) {
            Connected c = Connected.of(a, b, 16);
            MemoryRegion src = c.pda.register(ByteBuffer.allocateDirect(size), EnumSet.of(Access.LOCAL_WRITE));
            MemoryRegion dst = c.pdb.register(ByteBuffer.allocateDirect(size), EnumSet.of(Access.LOCAL_WRITE));
            java.util.SplittableRandom random = new java.util.SplittableRandom(seed);
            ByteBuffer fill = src.buffer().duplicate();
            while (fill.hasRemaining()) {
                fill.putLong(random.nextLong());
            }
            RecvRequest r = new RecvRequest();
            r.sgl().add(dst, 0, size);
            c.y.postRecv(r.wrId(5));
            SendRequest s = new SendRequest();
            s.sgl().add(src, 0, size);
            c.x.postSend(s.wrId(6));
            // Only the sender polls; nobody touches cqb until the send has completed.
            WorkCompletion[] wc = {new WorkCompletion()};
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (c.cqa.poll(wc, Duration.ofMillis(5)) == 0) {
                assertTrue(System.nanoTime() < deadline, "the send never completed (seed " + seed + "); receiver "
                        + c.y.counters() + ", sender " + c.x.counters());
            }
            assertEquals(WcStatus.SUCCESS, wc[0].status(), wc[0].toString());
            assertEquals(6, wc[0].wrId());
            assertEquals(1, c.cqb.poll(wc, Duration.ofSeconds(5)), "the receive completed before the ACK left");
            assertEquals(WcStatus.SUCCESS, wc[0].status(), wc[0].toString());
            assertEquals(size, wc[0].byteLength());
            assertEquals(-1, src.buffer().duplicate().clear().mismatch(dst.buffer().duplicate().clear()),
                    "payload differs (seed " + seed + ")");
        }
    }

    /**
     * Polled progress leaves a receive's ACK for the reply to carry in the same gathering
     * write. Replies of up to 4 MiB (more than loopback's socket buffers take at once) make
     * that write stop part-way through the ACK-and-frame vector and resume: every echo must
     * come back exact and every send complete, which needs every ACK to have arrived.
     */
    @Test
    void repliesThatCarryTheirAckStayExactWhenTheSocketTakesThemPartWay() throws Exception {
        int max = 4 << 20;
        int rounds = 40;
        long seed = 0xEC40;
        try (Device a = open("127.0.0.10", TcpProgress.POLL); Device b = open("127.0.0.20", TcpProgress.POLL)) {
            Connected c = Connected.of(a, b, 16);
            MemoryRegion out = c.pda.register(ByteBuffer.allocateDirect(max), EnumSet.of(Access.LOCAL_WRITE));
            MemoryRegion back = c.pda.register(ByteBuffer.allocateDirect(max), EnumSet.of(Access.LOCAL_WRITE));
            MemoryRegion echo = c.pdb.register(ByteBuffer.allocateDirect(max), EnumSet.of(Access.LOCAL_WRITE));
            CompletableFuture<Void> server = CompletableFuture.runAsync(() -> {
                try {
                    RecvRequest r = new RecvRequest();
                    SendRequest s = new SendRequest();
                    WorkCompletion[] wc = {new WorkCompletion()};
                    for (int i = 0; i < rounds; i++) {
                        r.reset().wrId(i).sgl().add(echo, 0, max);
                        c.y.postRecv(r);
                        int length = awaitOne(c.cqb, wc, "request " + i).byteLength();
                        s.reset().wrId(i).sgl().add(echo, 0, length);
                        c.y.postSend(s);
                        awaitOne(c.cqb, wc, "echo " + i);
                    }
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            java.util.SplittableRandom random = new java.util.SplittableRandom(seed);
            RecvRequest r = new RecvRequest();
            SendRequest s = new SendRequest();
            WorkCompletion[] wc = {new WorkCompletion()};
            for (int i = 0; i < rounds; i++) {
                int length = i % 4 == 0 ? 64 : 1 + random.nextInt(max);
                for (int k = 0; k < length; k++) {
                    out.buffer().put(k, (byte) random.nextInt());
                }
                r.reset().wrId(i).sgl().add(back, 0, max);
                c.x.postRecv(r);
                s.reset().wrId(i).sgl().add(out, 0, length);
                c.x.postSend(s);
                boolean sent = false;
                boolean echoed = false;
                while (!sent || !echoed) {
                    WorkCompletion done = awaitOne(c.cqa, wc, "round " + i + " (seed " + seed + ")");
                    if (done.opcode() == io.netreduce.verbs.WcOpcode.SEND) {
                        sent = true;
                    } else {
                        echoed = true;
                        assertEquals(length, done.byteLength(), "echo length, round " + i + " (seed " + seed + ")");
                    }
                }
                assertEquals(-1, out.buffer().duplicate().clear().limit(length)
                        .mismatch(back.buffer().duplicate().clear().limit(length)),
                        "echo differs in round " + i + " (seed " + seed + ")");
            }
            server.get(20, TimeUnit.SECONDS);
            assertTrue(c.y.counters().get(Counter.ACKS_SENT) >= rounds, "echo side ACKs " + c.y.counters());
        }
    }

    private static WorkCompletion awaitOne(CompletionQueue cq, WorkCompletion[] wc, String what)
            throws InterruptedException {
        assertEquals(1, cq.poll(wc, Duration.ofSeconds(10)), "a completion for " + what);
        assertEquals(WcStatus.SUCCESS, wc[0].status(), what + ": " + wc[0]);
        return wc[0];
    }

    @Test
    void frameHeaderRoundTrips() {
        FrameHeader h = new FrameHeader().wrap(ByteBuffer.allocateDirect(FrameHeader.LENGTH));
        h.set(FrameHeader.TYPE_WRITE_IMM, FrameHeader.STATUS_RNR, 0xFFFF_FFFE, 1 << 20, 0xCAFEBABE,
                0x1234_5678_9ABC_DEF0L, 0x0BAD_F00D, 1280);
        assertEquals(FrameHeader.TYPE_WRITE_IMM, h.type());
        assertEquals(FrameHeader.STATUS_RNR, h.status());
        assertEquals(0xFFFF_FFFE, h.sequence());
        assertEquals(1 << 20, h.length());
        assertEquals(0xCAFEBABE, h.immediate());
        assertEquals(0x1234_5678_9ABC_DEF0L, h.remoteAddress());
        assertEquals(0x0BAD_F00D, h.rkey());
        assertEquals(1280, h.aux());
        assertTrue(FrameHeader.isWrite(h.type()) && FrameHeader.hasImmediate(h.type()));
        assertEquals(0, h.flags());
        assertEquals(FrameHeader.FLAG_NO_ACK, h.flags(FrameHeader.FLAG_NO_ACK).flags());
        h.set(FrameHeader.TYPE_ACK, (byte) 0, 77, 0, 0, 0, 0, 0).credit((1L << 32) + 5, 1 << 20, 1L << 40);
        assertEquals(FrameHeader.TYPE_ACK, h.type());
        assertEquals(FrameHeader.FLAG_CREDIT, h.flags());
        assertEquals(77, h.sequence());
        assertEquals(0, h.length(), "an ACK carries no payload");
        assertEquals(5, h.creditReceives(), "receives posted, mod 2^32");
        assertEquals(1 << 20, h.creditBytes());
        assertEquals(1L << 40, h.creditTaken());
        h.set(FrameHeader.TYPE_SEND_IMM, (byte) 0, 9, 100, 0xCAFEBABE, 0, 0, 0).flags(FrameHeader.FLAG_NO_ACK).credit(3, 64, 7);
        assertTrue(h.grantsCredit());
        assertEquals(FrameHeader.FLAG_NO_ACK | FrameHeader.FLAG_CREDIT, h.flags());
        assertEquals(0xCAFEBABE, h.immediate(), "a SEND's credit leaves its immediate alone");
        assertEquals(100, h.length());
        assertEquals(3, h.creditReceives());
        assertEquals(64, h.creditBytes());
        assertEquals(7, h.creditTaken());
    }

    /**
     * The steady-state data path allocates nothing per message: after warm-up, the threads
     * that move the data allocate at most the JDK's lock wake-up nodes. With threaded
     * progress those are the provider's reader and writer threads; with polled progress it
     * is the polling thread itself (whose loop here allocates nothing of its own).
     */
    @ParameterizedTest
    @EnumSource(TcpProgress.class)
    void steadyStateMessagingDoesNotAllocatePerMessage(TcpProgress progress) throws Exception {
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        org.junit.jupiter.api.Assumptions.assumeTrue(mx.isThreadAllocatedMemorySupported(), "no allocation accounting");
        try (Device a = open("127.0.0.10", progress); Device b = open("127.0.0.20", progress)) {
            Connected c = Connected.of(a, b, 1024);
            MemoryRegion src = c.pda.register(ByteBuffer.allocateDirect(8192), EnumSet.of(Access.LOCAL_WRITE));
            MemoryRegion dst = c.pdb.register(ByteBuffer.allocateDirect(8192), EnumSet.of(Access.LOCAL_WRITE));
            SendRequest s = new SendRequest();
            s.sgl().add(src, 0, 2048).add(src, 4096, 2048);
            RecvRequest r = new RecvRequest();
            r.sgl().add(dst, 0, 4096).add(dst, 4096, 4096);
            WorkCompletion[] wcs = {new WorkCompletion(), new WorkCompletion(), new WorkCompletion(), new WorkCompletion()};
            int messages = 5_000;
            exchange(c, s, r, wcs, 2_000); // warm up: JIT, view caches
            long[] readers = providerThreadIds("-reader");
            long[] writers = providerThreadIds("-writer");
            if (progress == TcpProgress.POLL) {
                assertEquals(0, readers.length + writers.length, "no provider threads when polled");
                long self = Thread.currentThread().getId();
                long before = mx.getThreadAllocatedBytes(self);
                exchange(c, s, r, wcs, messages);
                double bytes = (mx.getThreadAllocatedBytes(self) - before) / (double) messages;
                // Only a lock contended with the device's fallback task may cost a JDK queue
                // node now and then; any real per-message object would cost 16-48+ bytes.
                assertTrue(bytes < 8, "the polling thread allocated " + bytes + " bytes per message");
                return;
            }
            assertEquals(2, readers.length, "one reader per connected QP");
            assertEquals(2, writers.length, "one writer per connected QP");
            long readersBefore = allocated(mx, readers);
            long writersBefore = allocated(mx, writers);
            exchange(c, s, r, wcs, messages);
            double readerBytes = (allocated(mx, readers) - readersBefore) / (double) messages;
            double writerBytes = (allocated(mx, writers) - writersBefore) / (double) messages;
            // Readers never wait on a Condition; only a contended lock may cost them a JDK
            // queue node now and then. Writers park on a Condition when idle, and each JDK
            // await allocates one 32-byte node. Any real per-message object (a copied header,
            // a duplicated view, an iovec array, a boxed key) would cost 16-48+ bytes.
            assertTrue(readerBytes < 8, "reader threads allocated " + readerBytes + " bytes per message");
            assertTrue(writerBytes < 32, "writer threads allocated " + writerBytes + " bytes per message");
        }
    }

    /** One queue pair on each of two devices, each with its own completion queue, connected to each other. */
    private static final class Connected {
        final CompletionQueue cqa;
        final CompletionQueue cqb;
        final ProtectionDomain pda;
        final ProtectionDomain pdb;
        final QueuePair x;
        final QueuePair y;

        private Connected(Device a, Device b, int cqCapacity) {
            cqa = a.createCompletionQueue(cqCapacity);
            cqb = b.createCompletionQueue(cqCapacity);
            pda = a.allocateProtectionDomain();
            pdb = b.allocateProtectionDomain();
            x = pda.createQueuePair(QpAttributes.builder(cqa, cqa).build());
            y = pdb.createQueuePair(QpAttributes.builder(cqb, cqb).build());
        }

        static Connected of(Device a, Device b, int cqCapacity) throws Exception {
            Connected c = new Connected(a, b, cqCapacity);
            CompletableFuture<Void> f = CompletableFuture.runAsync(() -> c.y.connect(c.x.localEndpoint(), Duration.ofSeconds(10)));
            c.x.connect(c.y.localEndpoint(), Duration.ofSeconds(10));
            f.get(10, TimeUnit.SECONDS);
            return c;
        }
    }

    private static final Duration POLL_SLICE = Duration.ofMillis(1);

    /** Sends {@code messages} from c.x to c.y, at most 64 outstanding; allocates nothing itself (messages are built only on failure). */
    private static void exchange(Connected c, SendRequest s, RecvRequest r, WorkCompletion[] wcs, int messages)
            throws InterruptedException {
        QueuePair x = c.x;
        QueuePair y = c.y;
        int sent = 0;
        int received = 0;
        int completed = 0;
        int posted = 0;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (received < messages || completed < messages) {
            if (System.nanoTime() > deadline) {
                fail("stalled after " + received + " messages");
            }
            while (posted < messages && posted - received < 64) {
                y.postRecv(r.wrId(posted++));
            }
            while (sent < messages && sent - completed < 64 && sent < posted) {
                x.postSend(s.wrId(sent++));
            }
            int n = c.cqa.poll(wcs, POLL_SLICE);
            for (int i = 0; i < n; i++) {
                if (wcs[i].status() != WcStatus.SUCCESS) {
                    fail(wcs[i].toString());
                }
                completed++;
            }
            n = c.cqb.poll(wcs);
            for (int i = 0; i < n; i++) {
                if (wcs[i].status() != WcStatus.SUCCESS) {
                    fail(wcs[i].toString());
                }
                received++;
            }
        }
    }

    private static long[] providerThreadIds(String suffix) {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith("tcp-verbs-qp") && t.getName().endsWith(suffix))
                .mapToLong(Thread::getId).toArray();
    }

    private static long allocated(com.sun.management.ThreadMXBean mx, long[] ids) {
        long sum = 0;
        for (long v : mx.getThreadAllocatedBytes(ids)) {
            sum += v;
        }
        return sum;
    }
}
