package io.netreduce.verbs.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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
import io.netreduce.verbs.WcStatus;
import io.netreduce.verbs.WorkCompletion;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The local ACK timer of the TCP provider: a peer that hangs without closing its connection
 * fails the oldest send with RETRY_EXC_ERR after ackTimeout × (retryCount + 1), while a
 * slow but live peer (a large transfer, a receiver in the RNR regime) never trips it.
 * The hung peer is a raw socket that completes the provider's handshake and then neither
 * reads nor answers, as a SIGSTOPped process or a black-holed path would. Runs once per
 * {@link TcpProgress} mode: {@link TcpAckTimerThreadsTest}, {@link TcpAckTimerPolledTest}.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
abstract class TcpAckTimerTest {
    private static final String LOCAL = "127.0.0.20";
    /** Higher than {@link #LOCAL}, so the provider's queue pair dials the silent peer. */
    private static final String SILENT = "127.0.0.30";
    private static final long UPPER_BOUND_MS = 5_000;

    /** The progress mode every device of the test is opened with. */
    abstract TcpProgress progress();

    // ------------------------------------------------------------------ hung peers

    @Test
    void silentPeerFailsTheOldestSendWithRetryExceededAndFlushesTheRest() throws Exception {
        silentPeerFailsSends(Duration.ofMillis(20), 2);
    }

    /** As in RC, only rnrRetry 7 means "forever"; retryCount 7 is eight ACK timeouts. */
    @Test
    void retryCountSevenIsFiniteForTheAckTimer() throws Exception {
        silentPeerFailsSends(Duration.ofMillis(10), 7);
    }

    private void silentPeerFailsSends(Duration ackTimeout, int retryCount) throws Exception {
        try (SilentPeer peer = new SilentPeer(); Device d = open(LOCAL)) {
            CompletionQueue cq = d.createCompletionQueue(64);
            ProtectionDomain pd = d.allocateProtectionDomain();
            QueuePair qp = peer.connect(pd, cq, ackTimeout, retryCount);
            MemoryRegion src = pd.register(ByteBuffer.allocateDirect(4096), EnumSet.of(Access.LOCAL_WRITE));
            SendRequest s = new SendRequest();
            s.sgl().add(src, 0, 256);
            long start = System.nanoTime();
            for (int i = 0; i < 3; i++) {
                qp.postSend(s.wrId(i));
            }

            WorkCompletion first = pollOne(cq, qp);
            long waitedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertEquals(0, first.wrId(), first.toString());
            assertEquals(WcStatus.RETRY_EXC_ERR, first.status(), first.toString());
            assertTrue(first.detail().contains(peer.endpoint().toString()) && first.detail().contains(" ms"),
                    "the detail names the peer and how long it waited: " + first.detail());
            long floorMs = ackTimeout.toMillis() * (retryCount + 1);
            assertTrue(waitedMs >= floorMs && waitedMs < UPPER_BOUND_MS,
                    "RETRY_EXC_ERR after " + waitedMs + " ms, expected in [" + floorMs + ", " + UPPER_BOUND_MS + ")");
            for (int i = 1; i < 3; i++) {
                WorkCompletion wc = pollOne(cq, qp);
                assertEquals(i, wc.wrId(), wc.toString());
                assertEquals(WcStatus.WR_FLUSH_ERR, wc.status(), wc.toString());
            }
            assertEquals(QpState.ERROR, qp.state());
            assertAckTimeoutsCounted(qp, retryCount);

            qp.postSend(s.wrId(9));
            WorkCompletion late = pollOne(cq, qp);
            assertEquals(WcStatus.WR_FLUSH_ERR, late.status(), "a send posted in ERROR is flushed: " + late);
            peer.assertClosedByProvider();
        }
    }

    @Test
    void writerBlockedInWriteToAPeerThatNeverReadsIsFailed() throws Exception {
        Duration ackTimeout = Duration.ofMillis(50);
        int retryCount = 2;
        int size = 32 << 20; // far beyond what the socket buffers of a peer that never reads take
        try (SilentPeer peer = new SilentPeer(); Device d = open(LOCAL)) {
            CompletionQueue cq = d.createCompletionQueue(64);
            ProtectionDomain pd = d.allocateProtectionDomain();
            QueuePair qp = peer.connect(pd, cq, ackTimeout, retryCount);
            List<Thread> threads = providerThreads(qp.qpn());
            assertEquals(progress() == TcpProgress.THREADS ? 2 : 0, threads.size(),
                    "a reader and a writer with threaded progress, none when polled: " + threads);
            MemoryRegion src = pd.register(ByteBuffer.allocateDirect(size), EnumSet.of(Access.LOCAL_WRITE));
            SendRequest s = new SendRequest();
            s.sgl().add(src, 0, size);
            long start = System.nanoTime();
            qp.postSend(s.wrId(1));
            qp.postSend(s.wrId(2));

            if (progress() == TcpProgress.THREADS) {
                // The case that matters: the writer is stuck in a socket write, not in its wait loop.
                Thread writer = threads.stream().filter(t -> t.getName().endsWith("-writer")).findFirst().orElseThrow();
                boolean sawBlockedWrite = false;
                long sampleUntil = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
                while (!sawBlockedWrite && qp.state() == QpState.READY && System.nanoTime() < sampleUntil) {
                    sawBlockedWrite = inSocketWrite(writer);
                    Thread.sleep(1);
                }
                assertTrue(sawBlockedWrite, "the writer was never seen blocked in a socket write (state " + qp.state() + ")");
            } else {
                // Polled: the post wrote what the socket took; the rest waits for a full socket to drain.
                assertTrue(qp.counters().get(Counter.BYTES_SENT) > 0, "the post started writing: " + qp.counters());
            }

            WorkCompletion first = pollOne(cq, qp);
            long waitedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertEquals(WcStatus.RETRY_EXC_ERR, first.status(), first.toString());
            assertEquals(1, first.wrId(), first.toString());
            assertTrue(first.detail().contains(peer.endpoint().toString()), first.detail());
            long floorMs = ackTimeout.toMillis() * (retryCount + 1);
            assertTrue(waitedMs >= floorMs && waitedMs < UPPER_BOUND_MS,
                    "RETRY_EXC_ERR after " + waitedMs + " ms, expected in [" + floorMs + ", " + UPPER_BOUND_MS + ")");
            WorkCompletion second = pollOne(cq, qp);
            assertEquals(WcStatus.WR_FLUSH_ERR, second.status(), second.toString());
            assertEquals(QpState.ERROR, qp.state());
            assertAckTimeoutsCounted(qp, retryCount);

            // The timer closed the connection, so both threads end on their own, before close().
            for (Thread t : threads) {
                t.join(TimeUnit.SECONDS.toMillis(2));
                assertFalse(t.isAlive(), t.getName() + " still runs after the timeout: " + stackOf(t));
            }
            long closeStart = System.nanoTime();
            qp.close();
            long closeMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - closeStart);
            assertTrue(closeMs < 1_000, "close took " + closeMs + " ms");
            assertEquals(QpState.CLOSED, qp.state());
        }
    }

    // ------------------------------------------------------------------ slow but live peers

    @Test
    void largeTransferWithAShortAckTimeoutSucceeds() throws Exception {
        int size = 64 << 20;
        long seed = 0x5EED_AC4L;
        UnaryOperator<QpAttributes.Builder> attrs = b -> b.ackTimeout(Duration.ofMillis(50)).retryCount(7);
        try (Pair p = new Pair(attrs)) {
            MemoryRegion src = p.pdA.register(ByteBuffer.allocateDirect(size), EnumSet.of(Access.LOCAL_WRITE));
            MemoryRegion dst = p.pdB.register(ByteBuffer.allocateDirect(size), EnumSet.of(Access.LOCAL_WRITE));
            ByteBuffer out = src.buffer().duplicate();
            SplittableRandom random = new SplittableRandom(seed);
            while (out.hasRemaining()) {
                out.putLong(random.nextLong());
            }
            RecvRequest r = new RecvRequest();
            r.sgl().add(dst, 0, size);
            p.b.postRecv(r.wrId(7));
            SendRequest s = new SendRequest();
            s.sgl().add(src, 0, size);
            p.a.postSend(s.wrId(7));
            WorkCompletion sent = pollOne(p.cqA, p.a);
            WorkCompletion received = pollOne(p.cqB, p.b);
            String counters = " (seed " + seed + ", sender counters " + p.a.counters() + ")";
            assertEquals(WcStatus.SUCCESS, sent.status(), sent + counters);
            assertEquals(WcStatus.SUCCESS, received.status(), received + counters);
            assertEquals(size, received.byteLength());
            assertEquals(-1, src.buffer().duplicate().clear().mismatch(dst.buffer().duplicate().clear()),
                    "first differing byte of the payload" + counters);
            assertEquals(QpState.READY, p.a.state());
        }
    }

    @Test
    void receiverInTheRnrRegimeLongerThanTheAckDeadlineDoesNotTripTheTimer() throws Exception {
        // Deadline 200 ms: short against the receiver's delay below, yet above the scheduling
        // pauses of a loaded two-core machine (the peer must still answer with RNR NAKs in time).
        Duration ackTimeout = Duration.ofMillis(100);
        int retryCount = 1;
        UnaryOperator<QpAttributes.Builder> attrs = b -> b.ackTimeout(ackTimeout).retryCount(retryCount)
                .rnrRetry(QpAttributes.INFINITE_RETRY).minRnrTimer(Duration.ofMillis(2));
        try (Pair p = new Pair(attrs)) {
            MemoryRegion src = p.pdA.register(ByteBuffer.allocateDirect(4096), EnumSet.of(Access.LOCAL_WRITE));
            MemoryRegion dst = p.pdB.register(ByteBuffer.allocateDirect(4096), EnumSet.of(Access.LOCAL_WRITE));
            SendRequest s = new SendRequest();
            s.sgl().add(src, 0, 1024);
            p.a.postSend(s.wrId(3));
            Thread.sleep(ackTimeout.toMillis() * (retryCount + 1) * 5); // no RECV posted: RNR NAKs meanwhile
            assertEquals(QpState.READY, p.a.state(), "counters " + p.a.counters());
            RecvRequest r = new RecvRequest();
            r.sgl().add(dst, 0, 4096);
            p.b.postRecv(r.wrId(3));
            WorkCompletion sent = pollOne(p.cqA, p.a);
            assertEquals(WcStatus.SUCCESS, sent.status(), sent + ", counters " + p.a.counters());
            assertTrue(p.a.counters().get(Counter.RNR_NAKS_RECEIVED) > 0, "the wait was RNR: " + p.a.counters());

            // An idle queue pair, nothing outstanding, never times out either.
            Thread.sleep(ackTimeout.toMillis() * (retryCount + 1) * 2);
            assertEquals(QpState.READY, p.a.state());
            assertEquals(QpState.READY, p.b.state());
        }
    }

    // ------------------------------------------------------------------ helpers

    /**
     * The failing stall alone expires retryCount + 1 ACK timeouts; on a loaded machine an
     * earlier expiry may be followed by progress (the writer resuming between two frames),
     * and it counts too, as an expiry that did happen.
     */
    private static void assertAckTimeoutsCounted(QueuePair qp, int retryCount) {
        long n = qp.counters().get(Counter.ACK_TIMEOUTS);
        assertTrue(n >= retryCount + 1, "ACK_TIMEOUTS " + n + ", expected at least " + (retryCount + 1)
                + ": " + qp.counters());
    }

    private Device open(String address) {
        return Verbs.open("tcp", DeviceOptions.builder().localAddress(address).port(0)
                .property(TcpVerbsProvider.PROGRESS, progress().name()).build());
    }

    private static WorkCompletion pollOne(CompletionQueue cq, QueuePair qp) throws InterruptedException {
        WorkCompletion[] out = {new WorkCompletion()};
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (System.nanoTime() < deadline) {
            if (cq.poll(out, Duration.ofMillis(5)) == 1) {
                return out[0];
            }
        }
        throw new AssertionError("no completion within 20 s on QP " + qp.qpn() + " (state " + qp.state()
                + ", counters " + qp.counters() + ")");
    }

    private static List<Thread> providerThreads(int qpn) {
        List<Thread> found = new ArrayList<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            String n = t.getName();
            if (t.isAlive() && (n.equals("tcp-verbs-qp" + qpn + "-reader") || n.equals("tcp-verbs-qp" + qpn + "-writer"))) {
                found.add(t);
            }
        }
        return found;
    }

    private static boolean inSocketWrite(Thread t) {
        for (StackTraceElement e : t.getStackTrace()) {
            if (e.getClassName().endsWith("SocketChannelImpl") && e.getMethodName().equals("write")) {
                return true;
            }
        }
        return false;
    }

    private static String stackOf(Thread t) {
        StringBuilder sb = new StringBuilder();
        for (StackTraceElement e : t.getStackTrace()) {
            sb.append("\n\tat ").append(e);
        }
        return sb.toString();
    }

    /**
     * A peer that speaks the provider's connection handshake and then hangs: it never reads
     * another byte and never answers, like a stopped process whose socket stays open.
     */
    private static final class SilentPeer implements AutoCloseable {
        private static final int PEER_QPN = 77;
        private final ServerSocket server;
        private final QpEndpoint endpoint;
        private Socket accepted;

        SilentPeer() throws IOException {
            server = new ServerSocket(0, 1, InetAddress.getByName(SILENT));
            endpoint = new QpEndpoint(InetAddress.getByName(SILENT), server.getLocalPort(), PEER_QPN, 0);
        }

        QpEndpoint endpoint() {
            return endpoint;
        }

        /** A queue pair of {@code pd} with these ACK-timer settings, connected to this peer. */
        QueuePair connect(ProtectionDomain pd, CompletionQueue cq, Duration ackTimeout, int retryCount) throws Exception {
            QueuePair qp = pd.createQueuePair(QpAttributes.builder(cq, cq).ackTimeout(ackTimeout).retryCount(retryCount).build());
            connect(qp);
            return qp;
        }

        /** Connects {@code qp} (which dials: its address is lower) and completes the handshake. */
        void connect(QueuePair qp) throws Exception {
            assertTrue(TcpQueuePair.compare(qp.localEndpoint(), endpoint) < 0, "the provider must dial");
            CompletableFuture<Void> dialing = CompletableFuture.runAsync(() -> qp.connect(endpoint, Duration.ofSeconds(10)));
            server.setSoTimeout(10_000);
            accepted = server.accept();
            ByteBuffer hello = ByteBuffer.allocate(Handshake.LENGTH);
            accepted.setSoTimeout(10_000);
            int read = accepted.getInputStream().readNBytes(hello.array(), 0, Handshake.LENGTH);
            assertEquals(Handshake.LENGTH, read, "a whole HELLO");
            assertEquals(null, Handshake.validate(hello));
            assertEquals(Handshake.KIND_HELLO, Handshake.kind(hello));
            assertEquals(PEER_QPN, Handshake.targetQpn(hello));
            ByteBuffer accept = Handshake.encode(Handshake.KIND_ACCEPT, PEER_QPN, Handshake.sourceQpn(hello),
                    Handshake.REASON_NONE);
            accepted.getOutputStream().write(accept.array());
            accepted.getOutputStream().flush();
            dialing.get(10, TimeUnit.SECONDS);
            assertEquals(QpState.READY, qp.state());
        }

        /** Drains what the provider sent; the stream must end, because the provider closed it. */
        void assertClosedByProvider() throws IOException {
            accepted.setSoTimeout(5_000);
            byte[] sink = new byte[64 * 1024];
            long drained = 0;
            for (int i = 0; i < 100_000; i++) {
                int n;
                try {
                    n = accepted.getInputStream().read(sink);
                } catch (SocketException e) {
                    return; // reset: closed by the provider just the same
                }
                if (n < 0) {
                    return;
                }
                drained += n;
            }
            throw new AssertionError("the provider kept the connection open; drained " + drained + " bytes");
        }

        @Override
        public void close() throws IOException {
            if (accepted != null) {
                accepted.close();
            }
            server.close();
        }
    }

    /** Two real TCP queue pairs on two devices, connected to each other. */
    private final class Pair implements AutoCloseable {
        final Device da;
        final Device db;
        final CompletionQueue cqA;
        final CompletionQueue cqB;
        final ProtectionDomain pdA;
        final ProtectionDomain pdB;
        final QueuePair a;
        final QueuePair b;

        Pair(UnaryOperator<QpAttributes.Builder> attrs) throws Exception {
            da = open("127.0.0.10");
            db = openOrClose("127.0.0.11", da);
            try {
                cqA = da.createCompletionQueue(256);
                cqB = db.createCompletionQueue(256);
                pdA = da.allocateProtectionDomain();
                pdB = db.allocateProtectionDomain();
                a = pdA.createQueuePair(attrs.apply(QpAttributes.builder(cqA, cqA)).build());
                b = pdB.createQueuePair(attrs.apply(QpAttributes.builder(cqB, cqB)).build());
                CompletableFuture<Void> f = CompletableFuture.runAsync(() -> b.connect(a.localEndpoint(), Duration.ofSeconds(10)));
                a.connect(b.localEndpoint(), Duration.ofSeconds(10));
                f.get(10, TimeUnit.SECONDS);
            } catch (Exception | AssertionError e) {
                close();
                throw e;
            }
        }

        private Device openOrClose(String address, Device other) {
            try {
                return open(address);
            } catch (RuntimeException e) {
                other.close();
                throw e;
            }
        }

        @Override
        public void close() {
            da.close();
            db.close();
        }
    }
}
