package io.netreduce.verbs.tcp;

import io.netreduce.verbs.support.ScatterGather;
import io.netreduce.verbs.Access;
import io.netreduce.verbs.Counter;
import io.netreduce.verbs.Counters;
import io.netreduce.verbs.MemoryRegion;
import io.netreduce.verbs.QpAttributes;
import io.netreduce.verbs.QpEndpoint;
import io.netreduce.verbs.QpState;
import io.netreduce.verbs.QueuePair;
import io.netreduce.verbs.RecvRequest;
import io.netreduce.verbs.ScatterGatherList;
import io.netreduce.verbs.SendOpcode;
import io.netreduce.verbs.SendRequest;
import io.netreduce.verbs.VerbsException;
import io.netreduce.verbs.WcOpcode;
import io.netreduce.verbs.WcStatus;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An RC queue pair carried by one TCP connection.
 *
 * <p>Frames go out as gathering writes of {@code [header, SGE views...]} straight from the
 * registered buffers, and come in by scattering each SEND's payload straight into the
 * posted RECV's buffers (or an RDMA WRITE's into the target region): no payload copy in
 * user space. Both directions are resumable state machines (which frame, how far; the
 * incoming one is a {@link TcpFrameReader}), so the same code serves the two
 * {@link TcpProgress} modes:
 * <ul>
 *   <li><b>poll</b> (what the communicators use): the socket is non-blocking and has no
 *       thread of its own. A poller of the completion queues drives it
 *       ({@link #progress()}), a post writes what the socket takes at once, and the device
 *       drives a queue pair nobody polls. The data is copied by the thread that consumes
 *       it, with no hand-over between threads.</li>
 *   <li><b>threads</b> (the provider's default): a <em>writer</em> thread sends request frames and the ACK/NAK frames
 *       the reader asks for (a small request posted while the socket is free is written by
 *       the posting thread instead); a <em>reader</em> thread never blocks on anything but
 *       the socket and never writes. A reader that never waits on a write is what makes
 *       bidirectional bulk traffic deadlock-free: every blocked write is eventually drained
 *       by the peer's reader. In poll mode nothing blocks, so the question does not arise.</li>
 * </ul>
 *
 * <p>Reliability follows RC: a send completes when the peer acknowledged it; a SEND that
 * finds no RECV is answered with an RNR NAK and retransmitted (with every later request)
 * after the responder's RNR timer, up to {@code rnrRetry} times (7 = forever); remote
 * access and length errors are NAKed and put both queue pairs in ERROR; a lost connection
 * fails the oldest outstanding send with RETRY_EXC_ERR and flushes the rest.
 *
 * <p>A peer can also hang without closing its connection (a stopped or deadlocked process,
 * a path that silently drops everything). The device's {@link AckTimer} covers that, as the
 * local ACK timer of an RC NIC does: while a transmitted request is unacknowledged and
 * nothing moves for {@code ackTimeout × (retryCount + 1)}, the oldest outstanding send
 * completes with RETRY_EXC_ERR, the rest are flushed, the queue pair enters ERROR and the
 * connection is closed so the reader and writer (which may be blocked in a socket call)
 * stop. Each ACK timeout that expires counts one {@link Counter#ACK_TIMEOUTS}. TCP
 * retransmits by itself, so an expiry sends nothing again; it only uses up one of the
 * {@code retryCount + 1} attempts, and {@code retryCount} 7 is finite here as in RC (only
 * {@code rnrRetry} 7 means forever). What counts as progress, and restarts the attempts:
 * an ACK or NAK for our requests, request bytes the socket accepted (a message is written
 * in chunks of {@link #WRITE_CHUNK_BYTES} so that a large message to a slow but live peer
 * shows progress, like the per-packet ACKs of RC), and any bytes arriving from the peer
 * (on one TCP stream the peer's ACK may queue behind its own large request). A requester
 * in RNR backoff has nothing transmitted and unacknowledged, so the timer does not run: an
 * RNR NAK proves the peer alive, and RNR waits are bounded by {@code rnrRetry} alone.
 */
final class TcpQueuePair implements QueuePair {
    private static final Logger LOG = LoggerFactory.getLogger(TcpQueuePair.class);
    /** At most this many bytes per socket write, so the ACK timer sees a large message progress. */
    static final int WRITE_CHUNK_BYTES = 1 << 20;
    /**
     * Request frames up to this size are written by the posting thread itself when the
     * socket is free and nothing is queued ahead: it saves waking the writer thread, the
     * largest single cost of a small message's latency. Larger frames go to the writer so
     * that postSend does not wait on the socket for long.
     */
    static final int INLINE_WRITE_BYTES = 64 * 1024;

    private final TcpDevice device;
    private final TcpProtectionDomain pd;
    private final int qpn;
    private final QpAttributes attributes;
    private final TcpCompletionQueue sendCq;
    private final TcpCompletionQueue recvCq;
    private final Counters counters = new Counters();
    private final QpEndpoint localEndpoint;

    /** Guards queue indices, state and the connection hand-over; never held during socket I/O. */
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private volatile QpState state = QpState.INIT;
    private volatile QpEndpoint remoteEndpoint;
    private QpEndpoint connecting;
    private boolean expectingIncoming;
    private SocketChannel pendingIncoming;
    private int pendingSourceQpn;
    private SocketChannel channel;
    private Thread readerThread;
    private Thread writerThread;

    // Send queue: [sendAcked, sendPosted) outstanding; [sendTransmitNext, sendPosted) not yet written.
    private final SendSlot[] sendSlots;
    private long sendPosted;
    private long sendTransmitNext;
    private long sendAcked;
    private boolean rnrBackoff;
    private long rnrBackoffUntilNanos;

    // Receive queue: [recvConsumed, recvPosted) posted and waiting.
    private final RecvSlot[] recvSlots;
    private long recvPosted;
    private long recvConsumed;

    /** A thread (the writer, or a poster writing inline) is writing to the socket; guarded by the lock. */
    private boolean socketBusy;

    // Control frames the reader wants the writer to send.
    private boolean ackPending;
    private int ackSequence;
    private boolean nakPending;
    private byte nakStatus;
    private int nakSequence;
    private int nakAux;

    // The frame being written, owned by the thread that claimed the socket (socketBusy).
    private final ByteBuffer control = ByteBuffer.allocateDirect(FrameHeader.LENGTH);
    private final FrameHeader controlHeader = new FrameHeader().wrap(control);
    private boolean writingControl;
    private SendSlot writingSlot;
    private int writingVectorLength;
    private long writingTotal;
    private long writingWritten;

    /** The incoming side: which part of which frame comes next, and what to do with it. */
    private final TcpFrameReader reader;

    // Polled progress (no reader or writer thread): pollers of the completion queues drive
    // the socket; the device's fallback task drives it when nobody has polled for a while.
    private final boolean polled;
    private volatile long lastPolledNanos;

    // Local ACK timer. Byte counts are written by one thread each (writer, reader) without
    // the lock; the rest is the AckTimer thread's, under the lock.
    private final long ackTimeoutNanos;
    private final int ackAttempts;
    private volatile long bytesWritten;
    private ScheduledFuture<?> ackTimerTask;
    private boolean awaitingAck;
    private long progressMark;
    private long progressNanos;
    private int ackTimeoutsCounted;

    TcpQueuePair(TcpDevice device, TcpProtectionDomain pd, int qpn, QpAttributes attributes) {
        this.device = device;
        this.pd = pd;
        this.qpn = qpn;
        this.attributes = attributes;
        this.ackTimeoutNanos = attributes.ackTimeout().toNanos();
        this.ackAttempts = attributes.retryCount() + 1;
        this.polled = device.progressMode() == TcpProgress.POLL;
        this.sendCq = (TcpCompletionQueue) attributes.sendCq();
        this.recvCq = (TcpCompletionQueue) attributes.recvCq();
        this.sendSlots = new SendSlot[attributes.maxSendWr()];
        for (int i = 0; i < sendSlots.length; i++) {
            sendSlots[i] = new SendSlot(attributes.maxSge());
        }
        this.recvSlots = new RecvSlot[attributes.maxRecvWr()];
        for (int i = 0; i < recvSlots.length; i++) {
            recvSlots[i] = new RecvSlot(attributes.maxSge());
        }
        int psn = attributes.initialPsn() >= 0 ? attributes.initialPsn() : ThreadLocalRandom.current().nextInt(1 << 24);
        InetSocketAddress bound = device.boundAddress();
        this.localEndpoint = new QpEndpoint(bound.getAddress(), bound.getPort(), qpn, psn);
        this.reader = new TcpFrameReader(this, attributes);
    }

    @Override
    public int qpn() {
        return qpn;
    }

    @Override
    public QpState state() {
        return state;
    }

    @Override
    public QpEndpoint localEndpoint() {
        return localEndpoint;
    }

    @Override
    public QpEndpoint remoteEndpoint() {
        return remoteEndpoint;
    }

    @Override
    public int mtu() {
        return attributes.mtu();
    }

    @Override
    public Counters counters() {
        return counters;
    }

    // ------------------------------------------------------------------ connection set-up

    /**
     * Exactly one side dials: the one whose (address, port, qpn) is lower. The other side's
     * device accepts the connection and hands it over by the QPN in the handshake, so both
     * sides may call connect in either order.
     */
    @Override
    public void connect(QpEndpoint remote, Duration timeout) {
        Objects.requireNonNull(remote, "remote endpoint");
        Objects.requireNonNull(timeout, "timeout");
        long deadline = System.nanoTime() + Math.max(0, timeout.toNanos());
        boolean dialer = compare(localEndpoint, remote) < 0;
        lock.lock();
        try {
            if (state != QpState.INIT || connecting != null) {
                throw new VerbsException("QP " + qpn + " cannot connect to " + remote + ": it is " + state
                        + (connecting != null ? " and already connecting to " + connecting : ""));
            }
            connecting = remote;
            expectingIncoming = !dialer;
        } finally {
            lock.unlock();
        }
        SocketChannel ch = null;
        try {
            ch = dialer ? dial(remote, deadline, timeout) : awaitIncoming(remote, deadline, timeout);
            install(ch, remote);
        } catch (RuntimeException e) {
            TcpDevice.closeQuietly(ch);
            lock.lock();
            try {
                connecting = null;
                expectingIncoming = false;
            } finally {
                lock.unlock();
            }
            throw e;
        }
    }

    private SocketChannel dial(QpEndpoint remote, long deadline, Duration timeout) {
        InetSocketAddress target = new InetSocketAddress(remote.address(), remote.port());
        IOException last = null;
        int attempts = 0;
        while (true) {
            long remainingMs = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
            if (remainingMs <= 0 || state != QpState.INIT) {
                throw new VerbsException("QP " + qpn + ": connecting to peer " + remote + " failed at step 'dial' "
                        + "within " + timeout.toMillis() + " ms after " + attempts + " attempts"
                        + (last != null ? ": " + last : "") + (state != QpState.INIT ? " (QP is " + state + ")" : ""));
            }
            attempts++;
            SocketChannel ch = null;
            try {
                ch = SocketChannel.open();
                ch.bind(new InetSocketAddress(localEndpoint.address(), 0));
                ch.socket().connect(target, (int) Math.min(Integer.MAX_VALUE, remainingMs));
                ch.write(Handshake.encode(Handshake.KIND_HELLO, qpn, remote.qpn(), Handshake.REASON_NONE));
                ch.socket().setSoTimeout((int) Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
                byte[] bytes = new byte[Handshake.LENGTH];
                new DataInputStream(ch.socket().getInputStream()).readFully(bytes);
                ch.socket().setSoTimeout(0);
                ByteBuffer reply = ByteBuffer.wrap(bytes);
                String bad = Handshake.validate(reply);
                if (bad != null) {
                    throw new VerbsException("QP " + qpn + ": peer " + remote + " answered the handshake wrongly: " + bad);
                }
                if (Handshake.kind(reply) != Handshake.KIND_ACCEPT) {
                    throw new VerbsException("QP " + qpn + ": peer " + remote + " rejected the connection: "
                            + Handshake.reasonText(Handshake.reason(reply)));
                }
                return ch;
            } catch (ConnectException | SocketTimeoutException | EOFException e) {
                // Refused (nothing listening yet), no answer in time, or dropped: retry until the deadline.
                TcpDevice.closeQuietly(ch);
                last = e;
                sleepQuietly(Math.min(20, Math.max(1, remainingMs / 4)));
            } catch (IOException e) {
                TcpDevice.closeQuietly(ch);
                throw new VerbsException("QP " + qpn + ": connecting to peer " + remote + " failed at step 'dial': " + e, e);
            } catch (RuntimeException e) {
                TcpDevice.closeQuietly(ch);
                throw e;
            }
        }
    }

    private SocketChannel awaitIncoming(QpEndpoint remote, long deadline, Duration timeout) {
        lock.lock();
        try {
            while (true) {
                if (pendingIncoming != null) {
                    SocketChannel ch = pendingIncoming;
                    pendingIncoming = null;
                    if (pendingSourceQpn == remote.qpn()) {
                        expectingIncoming = false;
                        return ch;
                    }
                    LOG.info("QP {}: dropping a connection from QP {} while waiting for {}", qpn, pendingSourceQpn, remote);
                    TcpDevice.closeQuietly(ch);
                }
                long remaining = deadline - System.nanoTime();
                if (remaining <= 0 || state != QpState.INIT) {
                    throw new VerbsException("QP " + qpn + ": connecting to peer " + remote + " failed at step 'accept': "
                            + "the peer did not dial " + localEndpoint + " within " + timeout.toMillis() + " ms"
                            + (state != QpState.INIT ? " (QP is " + state + ")" : ""));
                }
                changed.awaitNanos(remaining);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new VerbsException("QP " + qpn + ": interrupted while waiting for peer " + remote, e);
        } finally {
            lock.unlock();
        }
    }

    /** Called by the device's accept thread with a connection whose HELLO names this QP. */
    int offerIncoming(SocketChannel ch, int sourceQpn) {
        lock.lock();
        try {
            if (state != QpState.INIT || channel != null || pendingIncoming != null
                    || (connecting != null && !expectingIncoming)) {
                return Handshake.REASON_NOT_CONNECTABLE;
            }
            if (connecting != null && connecting.qpn() != sourceQpn) {
                return Handshake.REASON_WRONG_PEER;
            }
            pendingIncoming = ch;
            pendingSourceQpn = sourceQpn;
            changed.signalAll();
            return Handshake.REASON_NONE;
        } finally {
            lock.unlock();
        }
    }

    private void install(SocketChannel ch, QpEndpoint remote) {
        try {
            ch.configureBlocking(!polled);
            ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
        } catch (IOException e) {
            throw new VerbsException("QP " + qpn + ": configuring the connection to " + remote + " failed: " + e, e);
        }
        lock.lock();
        try {
            if (state != QpState.INIT) {
                throw new VerbsException("QP " + qpn + " became " + state + " while connecting to " + remote);
            }
            channel = ch;
            remoteEndpoint = remote;
            state = QpState.READY;
            if (polled) {
                lastPolledNanos = System.nanoTime();
                sendCq.attach(this, ch);
                if (recvCq != sendCq) {
                    recvCq.attach(this, ch);
                }
                device.drive(this);
            } else {
                readerThread = new Thread(() -> reader.loop(ch), "tcp-verbs-qp" + qpn + "-reader");
                writerThread = new Thread(this::writeLoop, "tcp-verbs-qp" + qpn + "-writer");
                readerThread.setDaemon(true);
                writerThread.setDaemon(true);
                readerThread.start();
                writerThread.start();
            }
            try {
                ackTimerTask = device.ackTimer().watch(this::checkProgress, attributes.ackTimeout());
            } catch (RejectedExecutionException e) {
                // The device is closing, and closes this queue pair next.
                LOG.debug("QP {}: no ACK timer, the device is closing", qpn);
            }
        } finally {
            lock.unlock();
        }
        LOG.debug("QP {} connected {} -> {}", qpn, localEndpoint, remote);
    }

    /** Orders endpoints by (address bytes, port, qpn) so both sides agree who dials. */
    static int compare(QpEndpoint a, QpEndpoint b) {
        int c = java.util.Arrays.compareUnsigned(a.address().getAddress(), b.address().getAddress());
        if (c != 0) {
            return c;
        }
        c = Integer.compare(a.port(), b.port());
        return c != 0 ? c : Integer.compare(a.qpn(), b.qpn());
    }

    // ------------------------------------------------------------------ posting

    @Override
    public void postSend(SendRequest request) {
        Objects.requireNonNull(request, "send request");
        ScatterGatherList sgl = request.sgl();
        long total = ScatterGather.check(qpn, sgl, attributes.maxSge(), pd, false);
        if (total > Integer.MAX_VALUE) {
            throw new VerbsException("QP " + qpn + ": message of " + total + " bytes exceeds the 2 GiB limit");
        }
        lock.lock();
        try {
            if (state == QpState.ERROR) {
                pushSend(request.wrId(), WcStatus.WR_FLUSH_ERR, request.opcode(), 0, "posted while the queue pair is in ERROR");
                return;
            }
            if (state != QpState.READY) {
                throw new VerbsException("QP " + qpn + " is " + state + ": connect it before posting sends");
            }
            if (sendPosted - sendAcked == sendSlots.length) {
                throw new VerbsException("QP " + qpn + ": send queue full (" + sendSlots.length + " outstanding requests)");
            }
            SendSlot slot = sendSlots[(int) (sendPosted % sendSlots.length)];
            slot.fill(request, (int) total);
            sendPosted++;
            if (polled) {
                // fall through to write what the socket takes now; pollers write the rest
            } else if (socketBusy || total > INLINE_WRITE_BYTES || sendTransmitNext != sendPosted - 1 || rnrBackoff) {
                changed.signalAll();
                return;
            } else {
                socketBusy = true;
                beginRequestFrame(sendTransmitNext++);
            }
        } finally {
            lock.unlock();
        }
        if (!polled) {
            writeInline();
        } else if (writeStep() && frameInProgress()) {
            // The socket filled part-way: a poller blocked in select() does not yet wait for
            // it to drain. (Racy read of the frame state: at worst a spurious wake-up.)
            sendCq.wakeUp();
        }
    }

    @Override
    public void postRecv(RecvRequest request) {
        Objects.requireNonNull(request, "receive request");
        long total = ScatterGather.check(qpn, request.sgl(), attributes.maxSge(), pd, true);
        lock.lock();
        try {
            if (state == QpState.ERROR) {
                pushRecv(request.wrId(), WcStatus.WR_FLUSH_ERR, WcOpcode.RECV, 0, false, 0,
                        "posted while the queue pair is in ERROR");
                return;
            }
            if (state == QpState.CLOSED || state == QpState.RESET) {
                throw new VerbsException("QP " + qpn + " is " + state + ": cannot post receives");
            }
            if (recvPosted - recvConsumed == recvSlots.length) {
                throw new VerbsException("QP " + qpn + ": receive queue full (" + recvSlots.length + " posted requests)");
            }
            recvSlots[(int) (recvPosted % recvSlots.length)].fill(request, total);
            recvPosted++;
        } finally {
            lock.unlock();
        }
    }

    // ------------------------------------------------------------------ writing frames

    /**
     * Picks the next frame to write: a pending ACK, then a pending NAK, then the next request
     * (unless in RNR backoff, or the queue pair is not READY). Caller holds the lock and has
     * claimed the socket ({@link #socketBusy}); no frame may be in progress.
     */
    private boolean claimFrameLocked() {
        if (ackPending) {
            ackPending = false;
            controlHeader.set(FrameHeader.TYPE_ACK, (byte) 0, ackSequence, 0, 0, 0, 0, 0);
            counters.increment(Counter.ACKS_SENT);
            beginControlFrame();
            return true;
        }
        if (nakPending) {
            nakPending = false;
            controlHeader.set(FrameHeader.TYPE_NAK, nakStatus, nakSequence, 0, 0, 0, 0, nakAux);
            if (nakStatus == FrameHeader.STATUS_RNR) {
                counters.increment(Counter.RNR_NAKS_SENT);
            }
            beginControlFrame();
            return true;
        }
        if (rnrBackoff && rnrBackoffUntilNanos - System.nanoTime() <= 0) {
            rnrBackoff = false;
        }
        if (state == QpState.READY && sendTransmitNext < sendPosted && !rnrBackoff) {
            beginRequestFrame(sendTransmitNext++);
            return true;
        }
        return false;
    }

    private void beginControlFrame() {
        writingControl = true;
        writingTotal = FrameHeader.LENGTH;
        writingWritten = 0;
        // Counted before the write: the peer's answer may arrive before write() returns.
        counters.increment(Counter.PACKETS_SENT);
        counters.add(Counter.BYTES_SENT, FrameHeader.LENGTH);
    }

    private void beginRequestFrame(long index) {
        SendSlot slot = sendSlots[(int) (index % sendSlots.length)];
        writingVectorLength = slot.prepare((int) index);
        writingSlot = slot;
        writingTotal = FrameHeader.LENGTH + (long) slot.length;
        writingWritten = 0;
        // Counted before the write: the peer's ACK (and so the completion a user polls) may
        // arrive before the writing thread returns from write().
        counters.increment(Counter.PACKETS_SENT);
        counters.add(Counter.BYTES_SENT, writingTotal);
    }

    private boolean frameInProgress() {
        return writingControl || writingSlot != null;
    }

    /**
     * One write call on the frame in progress; the frame is done when
     * {@link #frameInProgress()} turns false. A request goes as gathering writes of at most
     * {@link #WRITE_CHUNK_BYTES} (the last up to twice that): a blocking write returns only
     * when all it was given sits in the socket buffer, so one call per 64 MiB message would
     * hide from the ACK timer that a slow peer is reading. The tail goes with the last
     * chunk: a separate write of a few bytes would cost a system call and a segment. Each
     * iov buffer's position records what was written, so a non-blocking write that stops
     * part-way resumes where it stopped. Only by the thread that claimed the socket.
     */
    private long writeOnce(SocketChannel ch) throws IOException {
        long w;
        if (writingControl) {
            w = ch.write(control);
        } else {
            SendSlot slot = writingSlot;
            ByteBuffer[] iov = slot.iov;
            int n = writingVectorLength;
            int budget = writingTotal - writingWritten <= 2L * WRITE_CHUNK_BYTES ? Integer.MAX_VALUE : WRITE_CHUNK_BYTES;
            for (int i = 0; i < n; i++) {
                ByteBuffer b = iov[i];
                int take = Math.min(slot.ends[i] - b.position(), budget);
                b.limit(b.position() + take);
                budget -= take;
            }
            w = ch.write(iov, 0, n);
        }
        writingWritten += w;
        bytesWritten += w; // one socket writer at a time (socketBusy)
        if (writingWritten == writingTotal) {
            writingControl = false;
            writingSlot = null;
        }
        return w;
    }

    /** Drops the frame a failed write left behind, so no later writer resumes it. */
    private void abandonFrame() {
        writingControl = false;
        writingSlot = null;
    }

    /** Writes the claimed request frame on the posting thread, then frees the socket. */
    private void writeInline() {
        try {
            while (frameInProgress()) {
                writeOnce(channel);
            }
        } catch (IOException e) {
            abandonFrame();
            connectionLost("write", e);
        } finally {
            releaseSocket();
        }
    }

    /** Frees the socket for the next writer; wakes the writer thread if work queued up meanwhile. */
    private void releaseSocket() {
        lock.lock();
        try {
            socketBusy = false;
            if (ackPending || nakPending || sendTransmitNext < sendPosted || state != QpState.READY) {
                changed.signalAll();
            }
        } finally {
            lock.unlock();
        }
    }

    /** Threaded progress: the writer thread, blocking in write() while the socket is full. */
    private void writeLoop() {
        SocketChannel ch = channel;
        // Whether this thread claimed the socket for its last frame: released at the next
        // locked section rather than with a lock of its own after every write.
        boolean holding = false;
        try {
            while (true) {
                lock.lock();
                try {
                    if (holding) {
                        socketBusy = false;
                        holding = false;
                    }
                    while (true) {
                        if (state == QpState.CLOSED) {
                            return;
                        }
                        if (socketBusy) {
                            changed.await(); // a poster is writing inline; it signals when done
                            continue;
                        }
                        if (claimFrameLocked()) {
                            break;
                        }
                        if (state == QpState.READY && sendTransmitNext < sendPosted) {
                            changed.awaitNanos(rnrBackoffUntilNanos - System.nanoTime());
                        } else {
                            changed.await();
                        }
                    }
                    // A write that fails leaves the socket claimed: the queue pair is in ERROR
                    // by then, and nothing is written inline in ERROR.
                    socketBusy = true;
                    holding = true;
                } finally {
                    lock.unlock();
                }
                while (frameInProgress()) {
                    writeOnce(ch);
                }
            }
        } catch (IOException e) {
            abandonFrame();
            connectionLost("write", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            LOG.error("QP {}: writer failed", qpn, e);
            fail(WcStatus.GENERAL_ERR, "internal error in the writer: " + e);
        }
    }

    /**
     * Polled progress: writes frames until the socket takes no more or nothing is left,
     * without blocking. Sends ACKs and NAKs in ERROR too, so the peer learns why. False if
     * another thread holds the socket or nothing moved.
     */
    private boolean writeStep() {
        boolean moved = false;
        while (true) {
            lock.lock();
            try {
                if (socketBusy || state == QpState.CLOSED || (!frameInProgress() && !claimFrameLocked())) {
                    return moved;
                }
                socketBusy = true;
            } finally {
                lock.unlock();
            }
            boolean stop = false;
            try {
                while (true) {
                    long w = writeOnce(channel);
                    moved |= w > 0;
                    if (frameInProgress()) {
                        if (w == 0) {
                            stop = true; // socket buffer full: the poller waits for OP_WRITE
                            break;
                        }
                        continue;
                    }
                    lock.lock();
                    try {
                        if (!claimFrameLocked()) {
                            break;
                        }
                    } finally {
                        lock.unlock();
                    }
                }
            } catch (IOException e) {
                stop = true;
                abandonFrame();
                connectionLost("write", e);
            } finally {
                lock.lock();
                try {
                    socketBusy = false;
                } finally {
                    lock.unlock();
                }
            }
            if (stop) {
                return moved;
            }
            // A post that found the socket claimed left its request to us: look once more.
        }
    }

    // ------------------------------------------------------------------ for the frame reader

    /** The memory region an incoming RDMA WRITE names, if it exists and belongs to this queue pair's PD. */
    TcpMemoryRegion writeTarget(int rkey) {
        TcpMemoryRegion target = device.regionByKey(rkey);
        return target != null && target.pd() == pd && target.rkey() == rkey ? target : null;
    }

    /** Takes the oldest posted receive for an incoming request, or null (the requester gets an RNR NAK). */
    RecvSlot takeRecv() {
        lock.lock();
        try {
            if (recvConsumed >= recvPosted) {
                return null;
            }
            RecvSlot recv = recvSlots[(int) (recvConsumed % recvSlots.length)];
            recvConsumed++;
            return recv;
        } finally {
            lock.unlock();
        }
    }

    /** Asks the write side to acknowledge requests up to {@code sequence} (ACKs coalesce). */
    void acknowledge(int sequence) {
        lock.lock();
        try {
            ackPending = true;
            ackSequence = sequence;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    void nak(byte status, int sequence, int aux) {
        lock.lock();
        try {
            nakPending = true;
            nakStatus = status;
            nakSequence = sequence;
            nakAux = aux;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    void onAck(int sequence) {
        lock.lock();
        try {
            ackUpTo(sequence);
        } finally {
            lock.unlock();
        }
    }

    /** Completes every outstanding send up to and including {@code sequence}. Caller holds the lock. */
    private void ackUpTo(int sequence) {
        if (state != QpState.READY) {
            return;
        }
        int outstanding = (int) (sendTransmitNext - sendAcked);
        int covered = sequence - (int) sendAcked + 1;
        if (covered <= 0 || covered > outstanding) {
            if (covered > outstanding) {
                counters.increment(Counter.DROP_UNEXPECTED);
            }
            return;
        }
        for (int i = 0; i < covered; i++) {
            SendSlot slot = sendSlots[(int) (sendAcked % sendSlots.length)];
            sendAcked++;
            counters.increment(Counter.MESSAGES_SENT);
            if (slot.signaled) {
                pushSend(slot.wrId, WcStatus.SUCCESS, slot.opcode, slot.length, null);
            }
        }
        changed.signalAll();
    }

    void onNak(byte status, int sequence, int aux) {
        lock.lock();
        try {
            if (state != QpState.READY) {
                return;
            }
            ackUpTo(sequence - 1); // a NAK acknowledges everything before it, as in RC
            if (sequence != (int) sendAcked || sendAcked == sendTransmitNext) {
                counters.increment(Counter.DROP_UNEXPECTED);
                return;
            }
            SendSlot slot = sendSlots[(int) (sendAcked % sendSlots.length)];
            if (status == FrameHeader.STATUS_RNR) {
                counters.increment(Counter.RNR_NAKS_RECEIVED);
                slot.rnrAttempts++;
                if (attributes.rnrRetry() != QpAttributes.INFINITE_RETRY && slot.rnrAttempts > attributes.rnrRetry()) {
                    failLocked(WcStatus.RNR_RETRY_EXC_ERR, "peer " + remoteEndpoint + " had no receive posted after "
                            + attributes.rnrRetry() + " RNR retries");
                    return;
                }
                // Go back: resend this request and all after it once the responder's RNR timer has run.
                sendTransmitNext = sendAcked;
                rnrBackoff = true;
                rnrBackoffUntilNanos = System.nanoTime() + aux * 1000L;
                changed.signalAll();
            } else if (status == FrameHeader.STATUS_REMOTE_ACCESS) {
                failLocked(WcStatus.REM_ACCESS_ERR, "peer " + remoteEndpoint
                        + " refused the RDMA WRITE (bad rkey, range or access rights)");
            } else {
                failLocked(WcStatus.REM_INV_REQ_ERR, "peer " + remoteEndpoint
                        + " could not execute the request (e.g. it does not fit the posted receive)");
            }
        } finally {
            lock.unlock();
        }
    }

    // ------------------------------------------------------------------ polled progress

    /**
     * Polled progress, called by a poller of one of this queue pair's completion queues:
     * reads what arrived and writes what the socket takes, never blocking. True if anything
     * moved. Safe from several threads at once (each side has one owner at a time).
     */
    boolean progress() {
        if (state == QpState.CLOSED) {
            return false;
        }
        lastPolledNanos = System.nanoTime();
        return drive();
    }

    /**
     * The device's fallback: progress for a queue pair nobody has polled for
     * {@code idleNanos}, as an RC NIC keeps answering while its application computes.
     */
    void driveIfIdle(long now, long idleNanos) {
        if (state != QpState.CLOSED && now - lastPolledNanos > idleNanos) {
            drive();
        }
    }

    private boolean drive() {
        if (state == QpState.ERROR && !channel.isOpen()) {
            return false; // nothing left to read or to tell the peer
        }
        boolean moved = reader.step(channel);
        if (frameInProgress() || ackPending || nakPending || sendTransmitNext < sendPosted) {
            moved |= writeStep();
        }
        return moved;
    }

    /**
     * Whether a poller waiting for I/O must also wait for the socket to take more bytes.
     * Read without the lock: a stale answer costs one spurious or one late (by the poller's
     * longest wait) wake-up, never a lost frame.
     */
    boolean wantsWrite() {
        return frameInProgress() || ackPending || nakPending || (sendTransmitNext < sendPosted && !rnrBackoff);
    }

    /** {@code list} plus {@code qp}: the copy-on-write arrays that pollers and the fallback iterate without a lock. */
    static TcpQueuePair[] with(TcpQueuePair[] list, TcpQueuePair qp) {
        TcpQueuePair[] next = java.util.Arrays.copyOf(list, list.length + 1);
        next[list.length] = qp;
        return next;
    }

    /** {@code list} without {@code qp} (the same array if it is not there). */
    static TcpQueuePair[] without(TcpQueuePair[] list, TcpQueuePair qp) {
        for (int i = 0; i < list.length; i++) {
            if (list[i] == qp) {
                TcpQueuePair[] next = new TcpQueuePair[list.length - 1];
                System.arraycopy(list, 0, next, 0, i);
                System.arraycopy(list, i + 1, next, i, list.length - i - 1);
                return next;
            }
        }
        return list;
    }

    /** This queue pair's registration with a completion queue's selector, or null. */
    SelectionKey selectionKey(Selector selector) {
        SocketChannel ch = channel;
        return ch == null ? null : ch.keyFor(selector);
    }

    /** When the RNR backoff ends and a retransmission is due (System.nanoTime), or Long.MAX_VALUE. */
    long timerDueNanos() {
        return rnrBackoff ? rnrBackoffUntilNanos : Long.MAX_VALUE;
    }

    // ------------------------------------------------------------------ local ACK timer

    /**
     * Runs on the device's {@link AckTimer} thread every quarter ACK timeout. The stall clock
     * runs only while a transmitted request awaits its ACK (not while idle, and not in RNR
     * backoff, when nothing transmitted is outstanding); it restarts whenever anything moves.
     * Never fails early: a stall is measured from the first check that saw it, which is no
     * earlier than its real start.
     */
    private void checkProgress() {
        SocketChannel toClose = null;
        lock.lock();
        try {
            if (state != QpState.READY) {
                cancelAckTimerLocked();
                return;
            }
            long now = System.nanoTime();
            if (sendTransmitNext == sendAcked || rnrBackoff) {
                awaitingAck = false;
                return;
            }
            // Each part only grows, so the sum changes exactly when one of them moved.
            long mark = sendAcked + bytesWritten + reader.bytesRead();
            if (!awaitingAck || mark != progressMark) {
                awaitingAck = true;
                progressMark = mark;
                progressNanos = now;
                ackTimeoutsCounted = 0;
                return;
            }
            long waited = now - progressNanos;
            int expired = (int) Math.min(ackAttempts, waited / ackTimeoutNanos);
            while (ackTimeoutsCounted < expired) {
                counters.increment(Counter.ACK_TIMEOUTS);
                ackTimeoutsCounted++;
            }
            if (expired < ackAttempts) {
                return;
            }
            failLocked(WcStatus.RETRY_EXC_ERR, "no progress from peer " + remoteEndpoint + " for "
                    + TimeUnit.NANOSECONDS.toMillis(waited) + " ms: the " + attributes.ackTimeout().toMillis()
                    + " ms ACK timeout expired " + ackAttempts + " times (retryCount " + attributes.retryCount()
                    + "); the peer hangs or the path drops everything");
            toClose = channel;
        } catch (RuntimeException e) {
            // A periodic task that throws is never run again: say so rather than lose the timer silently.
            LOG.error("QP {}: ACK timer check failed", qpn, e);
        } finally {
            lock.unlock();
        }
        // Wakes the reader and a writer blocked in write(); they find the queue pair in ERROR.
        TcpDevice.closeQuietly(toClose);
    }

    private void cancelAckTimerLocked() {
        if (ackTimerTask != null) {
            ackTimerTask.cancel(false);
            ackTimerTask = null;
        }
    }

    // ------------------------------------------------------------------ errors and teardown

    void connectionLost(String step, IOException e) {
        if (state == QpState.CLOSED) {
            return;
        }
        String what = e instanceof EOFException ? "closed by the peer" : e.toString();
        fail(WcStatus.RETRY_EXC_ERR, "connection to peer " + remoteEndpoint + " lost during " + step + ": " + what);
        TcpDevice.closeQuietly(channel);
    }

    void fail(WcStatus firstStatus, String detail) {
        lock.lock();
        try {
            failLocked(firstStatus, detail);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Moves to ERROR: the oldest outstanding send completes with {@code firstStatus} (if
     * given), every other outstanding send and receive is flushed. Caller holds the lock.
     */
    private void failLocked(WcStatus firstStatus, String detail) {
        if (state == QpState.ERROR || state == QpState.CLOSED) {
            return;
        }
        state = QpState.ERROR;
        cancelAckTimerLocked();
        LOG.info("QP {} ({} -> {}) entered ERROR: {}", qpn, localEndpoint, remoteEndpoint, detail);
        flushLocked(firstStatus, detail);
    }

    private void flushLocked(WcStatus firstStatus, String detail) {
        boolean first = firstStatus != null;
        while (sendAcked < sendPosted) {
            SendSlot slot = sendSlots[(int) (sendAcked % sendSlots.length)];
            sendAcked++;
            pushSend(slot.wrId, first ? firstStatus : WcStatus.WR_FLUSH_ERR, slot.opcode, 0,
                    first ? detail : "flushed: " + detail);
            first = false;
        }
        sendTransmitNext = sendPosted;
        while (recvConsumed < recvPosted) {
            RecvSlot slot = recvSlots[(int) (recvConsumed % recvSlots.length)];
            recvConsumed++;
            pushRecv(slot.wrId, WcStatus.WR_FLUSH_ERR, WcOpcode.RECV, 0, false, 0, "flushed: " + detail);
        }
        changed.signalAll();
    }

    private void pushSend(long wrId, WcStatus status, SendOpcode opcode, int length, String detail) {
        WcOpcode op = opcode.isRdmaWrite() ? WcOpcode.RDMA_WRITE : WcOpcode.SEND;
        if (!sendCq.push(wrId, status, op, length, false, 0, qpn, detail)) {
            completionQueueOverflow("send");
        }
    }

    void pushRecv(long wrId, WcStatus status, WcOpcode opcode, int length, boolean hasImm, int imm,
                  String detail) {
        if (!recvCq.push(wrId, status, opcode, length, hasImm, imm, qpn, detail)) {
            completionQueueOverflow("receive");
        }
    }

    private void completionQueueOverflow(String which) {
        counters.increment(Counter.DROP_QUEUE_FULL);
        if (state == QpState.READY || state == QpState.INIT) {
            LOG.error("QP {}: {} completion queue overflowed (capacity too small or not polled); the queue pair "
                    + "enters ERROR", qpn, which);
            // The lock is reentrant; flushing further completions into a full queue just counts drops.
            fail(WcStatus.GENERAL_ERR, which + " completion queue overflow");
        }
    }

    @Override
    public void close() {
        SocketChannel ch;
        lock.lock();
        try {
            if (state == QpState.CLOSED) {
                return;
            }
            if (state != QpState.ERROR) {
                flushLocked(null, "queue pair closed");
            }
            state = QpState.CLOSED;
            cancelAckTimerLocked();
            ch = channel;
            TcpDevice.closeQuietly(pendingIncoming);
            pendingIncoming = null;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
        TcpDevice.closeQuietly(ch);
        if (polled) {
            sendCq.detach(this);
            recvCq.detach(this);
        }
        device.forget(this);
        join(readerThread);
        join(writerThread);
        LOG.debug("QP {} closed; counters {}", qpn, counters);
    }

    private static void join(Thread t) {
        if (t == null || t == Thread.currentThread()) {
            return;
        }
        try {
            t.join(2_000);
            if (t.isAlive()) {
                LOG.warn("{} did not stop within 2 s", t.getName());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    // ------------------------------------------------------------------ helpers

    private static void sleepQuietly(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new VerbsException("interrupted while connecting", e);
        }
    }

    @Override
    public String toString() {
        return "tcp QP " + qpn + " " + localEndpoint + " -> " + remoteEndpoint + " " + state;
    }

    // ------------------------------------------------------------------ queue slots

    /**
     * One send-queue entry: a copy of the posted request plus the header buffer and the
     * gathering-write vector used to transmit it. Views of the memory regions are cached per
     * SGE position and only replaced when a post names a different region, so steady-state
     * posting allocates nothing.
     */
    private static final class SendSlot {
        final ScatterGatherList sgl;
        final ByteBuffer headerBuffer = ByteBuffer.allocateDirect(FrameHeader.LENGTH);
        final FrameHeader header = new FrameHeader().wrap(headerBuffer);
        final ByteBuffer[] iov;
        /** Where each {@link #iov} buffer's part of the frame ends (its limit before chunking). */
        final int[] ends;
        final TcpMemoryRegion[] viewRegions;
        long wrId;
        SendOpcode opcode;
        int immediate;
        long remoteAddress;
        int rkey;
        boolean signaled;
        int length;
        int rnrAttempts;

        SendSlot(int maxSge) {
            sgl = new ScatterGatherList(maxSge);
            iov = new ByteBuffer[1 + maxSge];
            ends = new int[1 + maxSge];
            viewRegions = new TcpMemoryRegion[maxSge];
            iov[0] = headerBuffer;
        }

        void fill(SendRequest r, int total) {
            wrId = r.wrId();
            opcode = r.opcode();
            immediate = r.immediate();
            remoteAddress = r.remoteAddress();
            rkey = r.rkey();
            signaled = r.signaled();
            length = total;
            rnrAttempts = 0;
            sgl.copyFrom(r.sgl());
        }

        /** Fills the header and points the vector at the payload; returns the vector length. Only by the thread holding the socket. */
        int prepare(int sequence) {
            byte type;
            switch (opcode) {
                case SEND: type = FrameHeader.TYPE_SEND; break;
                case SEND_WITH_IMM: type = FrameHeader.TYPE_SEND_IMM; break;
                case RDMA_WRITE: type = FrameHeader.TYPE_WRITE; break;
                default: type = FrameHeader.TYPE_WRITE_IMM; break;
            }
            header.set(type, (byte) 0, sequence, length, immediate, remoteAddress, rkey, 0);
            ends[0] = FrameHeader.LENGTH;
            for (int i = 0; i < sgl.count(); i++) {
                TcpMemoryRegion mr = (TcpMemoryRegion) sgl.region(i);
                if (viewRegions[i] != mr) {
                    viewRegions[i] = mr;
                    iov[1 + i] = mr.newView();
                }
                int offset = sgl.offset(i);
                ends[1 + i] = offset + sgl.length(i);
                iov[1 + i].limit(ends[1 + i]).position(offset);
            }
            return 1 + sgl.count();
        }
    }

    /** One receive-queue entry with its scattering-read vector (views cached as in {@link SendSlot}). */
    static final class RecvSlot {
        final ScatterGatherList sgl;
        final ByteBuffer[] iov;
        final TcpMemoryRegion[] viewRegions;
        long wrId;
        long capacity;

        RecvSlot(int maxSge) {
            sgl = new ScatterGatherList(maxSge);
            iov = new ByteBuffer[maxSge];
            viewRegions = new TcpMemoryRegion[maxSge];
        }

        void fill(RecvRequest r, long total) {
            wrId = r.wrId();
            capacity = total;
            sgl.copyFrom(r.sgl());
        }

        /** Points the vector at the first {@code length} bytes of the SGEs; returns how many buffers it uses. Reader thread only. */
        int prepareScatter(int length) {
            int left = length;
            int n = 0;
            for (int i = 0; i < sgl.count() && left > 0; i++) {
                TcpMemoryRegion mr = (TcpMemoryRegion) sgl.region(i);
                if (viewRegions[i] != mr) {
                    viewRegions[i] = mr;
                    iov[i] = mr.newView();
                }
                int take = Math.min(left, sgl.length(i));
                int offset = sgl.offset(i);
                iov[i].limit(offset + take).position(offset);
                left -= take;
                n = i + 1;
            }
            return n;
        }
    }
}
