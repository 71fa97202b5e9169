package io.netreduce.verbs.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

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

/** TCP-provider specifics the conformance suite does not cover: connection set-up and the hot path. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class TcpQueuePairTest {

    private static Device open(String address) {
        return Verbs.open("tcp", DeviceOptions.builder().localAddress(address).port(0).build());
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
    }

    /**
     * The steady-state data path allocates nothing per message: after warm-up, the provider's
     * provider threads allocate at most the JDK's lock wake-up nodes.
     */
    @Test
    void steadyStateMessagingDoesNotAllocatePerMessage() throws Exception {
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        org.junit.jupiter.api.Assumptions.assumeTrue(mx.isThreadAllocatedMemorySupported(), "no allocation accounting");
        try (Device a = open("127.0.0.10"); Device b = open("127.0.0.20")) {
            CompletionQueue cqa = a.createCompletionQueue(1024);
            CompletionQueue cqb = b.createCompletionQueue(1024);
            ProtectionDomain pda = a.allocateProtectionDomain();
            ProtectionDomain pdb = b.allocateProtectionDomain();
            QueuePair x = pda.createQueuePair(QpAttributes.builder(cqa, cqa).build());
            QueuePair y = pdb.createQueuePair(QpAttributes.builder(cqb, cqb).build());
            CompletableFuture<Void> f = CompletableFuture.runAsync(() -> y.connect(x.localEndpoint(), Duration.ofSeconds(10)));
            x.connect(y.localEndpoint(), Duration.ofSeconds(10));
            f.get(10, TimeUnit.SECONDS);
            MemoryRegion src = pda.register(ByteBuffer.allocateDirect(8192), EnumSet.of(Access.LOCAL_WRITE));
            MemoryRegion dst = pdb.register(ByteBuffer.allocateDirect(8192), EnumSet.of(Access.LOCAL_WRITE));
            SendRequest s = new SendRequest();
            s.sgl().add(src, 0, 2048).add(src, 4096, 2048);
            RecvRequest r = new RecvRequest();
            r.sgl().add(dst, 0, 4096).add(dst, 4096, 4096);
            WorkCompletion[] wcs = {new WorkCompletion(), new WorkCompletion(), new WorkCompletion(), new WorkCompletion()};
            exchange(x, y, s, r, cqa, cqb, wcs, 2_000); // warm up: JIT, view caches
            long[] readers = providerThreadIds("-reader");
            long[] writers = providerThreadIds("-writer");
            assertEquals(2, readers.length, "one reader per connected QP");
            assertEquals(2, writers.length, "one writer per connected QP");
            long readersBefore = allocated(mx, readers);
            long writersBefore = allocated(mx, writers);
            int messages = 5_000;
            exchange(x, y, s, r, cqa, cqb, wcs, messages);
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

    private static void exchange(QueuePair x, QueuePair y, SendRequest s, RecvRequest r, CompletionQueue cqa,
                                 CompletionQueue cqb, WorkCompletion[] wcs, int messages) throws InterruptedException {
        int sent = 0;
        int received = 0;
        int completed = 0;
        int posted = 0;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (received < messages || completed < messages) {
            assertTrue(System.nanoTime() < deadline, "stalled after " + received + " messages");
            while (posted < messages && posted - received < 64) {
                y.postRecv(r.wrId(posted++));
            }
            while (sent < messages && sent - completed < 64 && sent < posted) {
                x.postSend(s.wrId(sent++));
            }
            int n = cqa.poll(wcs, Duration.ofMillis(1));
            for (int i = 0; i < n; i++) {
                assertEquals(WcStatus.SUCCESS, wcs[i].status(), wcs[i].toString());
                completed++;
            }
            n = cqb.poll(wcs);
            for (int i = 0; i < n; i++) {
                assertEquals(WcStatus.SUCCESS, wcs[i].status(), wcs[i].toString());
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
