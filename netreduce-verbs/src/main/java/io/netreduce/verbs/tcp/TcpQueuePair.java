package io.netreduce.verbs.tcp;

import io.netreduce.verbs.Counter;
import io.netreduce.verbs.Counters;
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
import io.netreduce.verbs.support.ScatterGather;
import io.netreduce.wire.tcp.TcpCongestionControl;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An RC queue pair carried by one TCP connection: its state, its send and receive queues,
 * the acknowledgements, and its errors. The roles around it each have a class of their own:
 * {@link TcpConnector} sets the connection up, {@link TcpFrameWriter} and
 * {@link TcpFrameReader} move the frames (resumable state machines, so the same code serves
 * both progress modes), {@link TcpStallWatch} is the local ACK timer, and a
 * {@link TcpProgressDriver} ({@link ThreadedProgress} or {@link PolledProgress}, chosen by
 * {@link TcpProgress}) decides who runs the writer and the reader.
 *
 * <p>Frames go out as gathering writes of {@code [header, SGE views...]} straight from the
 * registered buffers, and come in by scattering each SEND's payload straight into the
 * posted RECV's buffers (or an RDMA WRITE's into the target region): no payload copy in
 * user space.
 *
 * <p>Reliability follows RC: a send completes when the peer acknowledged it; a SEND that
 * finds no RECV is answered with an RNR NAK and retransmitted (with every later request)
 * after the responder's RNR timer, up to {@code rnrRetry} times (7 = forever); remote
 * access and length errors are NAKed and put both queue pairs in ERROR; a lost connection
 * fails the oldest outstanding send with RETRY_EXC_ERR and flushes the rest.
 *
 * <p>A peer can also hang without closing its connection (a stopped or deadlocked process,
 * a path that silently drops everything). The {@link TcpStallWatch} covers that, as the
 * local ACK timer of an RC NIC does: while a transmitted request is unacknowledged and
 * nothing moves for {@code ackTimeout × (retryCount + 1)}, the oldest outstanding send
 * completes with RETRY_EXC_ERR, the rest are flushed, the queue pair enters ERROR and the
 * connection is closed so the reader and writer (which may be blocked in a socket call)
 * stop. Each ACK timeout that expires counts one {@link Counter#ACK_TIMEOUTS}. TCP
 * retransmits by itself, so an expiry sends nothing again; it only uses up one of the
 * {@code retryCount + 1} attempts, and {@code retryCount} 7 is finite here as in RC (only
 * {@code rnrRetry} 7 means forever). What counts as progress, and restarts the attempts:
 * an ACK or NAK for our requests, request bytes the socket accepted (a message is written
 * in chunks of {@link TcpFrameWriter#WRITE_CHUNK_BYTES} so that a large message to a slow
 * but live peer shows progress, like the per-packet ACKs of RC), and any bytes arriving
 * from the peer (on one TCP stream the peer's ACK may queue behind its own large request).
 * A requester in RNR backoff has nothing transmitted and unacknowledged, so the timer does
 * not run: an RNR NAK proves the peer alive, and RNR waits are bounded by {@code rnrRetry}.
 */
final class TcpQueuePair implements QueuePair {
    private static final Logger LOG = LoggerFactory.getLogger(TcpQueuePair.class);

    private final TcpDevice device;
    private final TcpProtectionDomain pd;
    private final int qpn;
    private final QpAttributes attributes;
    private final TcpCompletionQueue sendCq;
    private final TcpCompletionQueue recvCq;
    private final Counters counters = new Counters();
    private final QpEndpoint localEndpoint;

    /** Guards queue indices, state and the frame requests; never held during socket I/O. */
    final ReentrantLock lock = new ReentrantLock();
    /** Signalled whenever the writer may have something to do, or the state changed. */
    final Condition changed = lock.newCondition();
    private volatile QpState state = QpState.INIT;
    private volatile QpEndpoint remoteEndpoint;
    private SocketChannel channel;

    // Send queue: [sendAcked, sendPosted) outstanding; [sendTransmitNext, sendPosted) not yet written.
    private final TcpSendSlot[] sendSlots;
    private volatile long sendPosted;
    private volatile long sendTransmitNext;
    private long sendAcked;
    private volatile boolean rnrBackoff;
    private long rnrBackoffUntilNanos;
    /** Requests posted that consume one of the responder's receives (all but RDMA WRITE). */
    private long receivesClaimed;
    /** Payload bytes of the requests posted that consume a receive. */
    private long receiveBytesClaimed;
    /**
     * The receive credit from the responder's latest ACK or SEND: its receives with an
     * index below {@link #creditReceives} are posted, none smaller than {@link #creditBytes}.
     */
    private long creditReceives;
    private int creditBytes;
    /** From the latest credit: payload bytes the responder has taken into receives. */
    private long creditTaken;
    /**
     * The most payload a requester sends under credit beyond what the responder last said
     * it had taken. A credited SEND completes once written, so an application that paces
     * itself by its send completions (a ring's window) could otherwise keep as much in flight
     * as the socket buffers hold, several MiB on loopback: the ring over tcp at P = 2, 1-8
     * MiB, took 0.88-0.97x the busbw of no credits without this bound. Three of the ring's
     * 1 MiB messages (each with its header) fit: with a 1 MiB bound none did, so every one
     * waited for its ACK, and a call's last send for a round trip after the peer had read
     * it; at P = 2, 2 MiB, 4 MiB ran 1.18x the busbw of 1 MiB at 0.85x the CPU, and level
     * from 4 to 64 MiB (docs/benchmarks.md).
     */
    static final long CREDIT_AHEAD_BYTES = 4 << 20;
    /** The most receives one credit counts, so that computing it looks at a bounded number. */
    static final int MAX_CREDITED_AHEAD = 64;

    // Receive queue: [recvConsumed, recvPosted) posted and waiting.
    private final TcpRecvSlot[] recvSlots;
    private long recvPosted;
    private long recvConsumed;
    /**
     * The request this side last answered with an RNR NAK, while no receive has been posted
     * since and none taken: the next post tells the requester at once, with a receive credit,
     * instead of leaving it to wait out the RNR timer (-1: none). See {@link #postRecv}.
     */
    private long rnrNakedSequence = -1;

    private final TcpConnector connector = new TcpConnector(this);
    private final TcpFrameWriter writer = new TcpFrameWriter(this);
    private final TcpFrameReader reader;
    private final TcpStallWatch stallWatch;
    private final TcpProgressDriver progress;

    TcpQueuePair(TcpDevice device, TcpProtectionDomain pd, int qpn, QpAttributes attributes) {
        this.device = device;
        this.pd = pd;
        this.qpn = qpn;
        this.attributes = attributes;
        this.sendCq = (TcpCompletionQueue) attributes.sendCq();
        this.recvCq = (TcpCompletionQueue) attributes.recvCq();
        this.sendSlots = new TcpSendSlot[attributes.maxSendWr()];
        for (int i = 0; i < sendSlots.length; i++) {
            sendSlots[i] = new TcpSendSlot(attributes.maxSge());
        }
        this.recvSlots = new TcpRecvSlot[attributes.maxRecvWr()];
        for (int i = 0; i < recvSlots.length; i++) {
            recvSlots[i] = new TcpRecvSlot(attributes.maxSge());
        }
        int psn = attributes.initialPsn() >= 0 ? attributes.initialPsn() : ThreadLocalRandom.current().nextInt(1 << 24);
        InetSocketAddress bound = device.boundAddress();
        this.localEndpoint = new QpEndpoint(bound.getAddress(), bound.getPort(), qpn, psn);
        this.reader = new TcpFrameReader(this, attributes);
        this.stallWatch = new TcpStallWatch(this, attributes);
        this.progress = device.progressMode().driverFor(this, sendCq, recvCq);
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

    /** Its connection's congestion control, or null before it connects or where it cannot be read. */
    String congestionControl() {
        SocketChannel ch = channel;
        return ch == null ? null : TcpCongestionControl.get(ch);
    }

    @Override
    public QpEndpoint remoteEndpoint() {
        return remoteEndpoint;
    }

    @Override
    public void releaseHeldAck() {
        progress.releaseHeldAck();
    }

    @Override
    public int mtu() {
        return attributes.mtu();
    }

    @Override
    public Counters counters() {
        return counters;
    }

    TcpDevice device() {
        return device;
    }

    /** Its local ACK timeout, as created. */
    Duration ackTimeout() {
        return attributes.ackTimeout();
    }

    TcpFrameWriter writer() {
        return writer;
    }

    TcpFrameReader reader() {
        return reader;
    }

    boolean isReady() {
        return state == QpState.READY;
    }

    // ------------------------------------------------------------------ connection set-up

    @Override
    public void connect(QpEndpoint remote, Duration timeout) {
        Objects.requireNonNull(remote, "remote endpoint");
        Objects.requireNonNull(timeout, "timeout");
        SocketChannel ch = connector.connect(remote, timeout);
        try {
            install(ch, remote);
        } catch (RuntimeException e) {
            TcpDevice.closeQuietly(ch);
            connector.connectFailed();
            throw e;
        }
    }

    /** Called by the device's accept thread with a connection whose HELLO names this QP. */
    int offerIncoming(SocketChannel ch, int sourceQpn) {
        return connector.offerIncoming(ch, sourceQpn);
    }

    private void install(SocketChannel ch, QpEndpoint remote) {
        try {
            ch.configureBlocking(progress.blockingSocket());
            ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
            device.congestion().apply(ch);
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
            progress.startLocked(ch);
            stallWatch.startLocked(device.ackTimer());
        } finally {
            lock.unlock();
        }
        LOG.debug("QP {} connected {} -> {}", qpn, localEndpoint, remote);
    }

    /** Orders endpoints by (address bytes, port, qpn) so both sides agree who dials. */
    static int compare(QpEndpoint a, QpEndpoint b) {
        return TcpConnector.compare(a, b);
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
        boolean claimed;
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
            long index = sendPosted;
            boolean consumesReceive = request.opcode() != SendOpcode.RDMA_WRITE;
            if (consumesReceive) {
                receiveBytesClaimed += total;
            }
            sendSlot(index).fill(request, (int) total, consumesReceive ? receivesClaimed++ : -1,
                    receiveBytesClaimed);
            sendPosted = index + 1;
            claimed = progress.sendQueuedLocked(index, total);
        } finally {
            lock.unlock();
        }
        progress.afterSendQueued(claimed);
    }

    @Override
    public void postRecv(RecvRequest request) {
        Objects.requireNonNull(request, "receive request");
        long total = ScatterGather.check(qpn, request.sgl(), attributes.maxSge(), pd, true);
        boolean notify;
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
            // While the NAK itself waits to be written, the writer sends the notice after it
            // (rnrNakWrittenLocked): written before the NAK, it would reach the requester
            // before its backoff began, and end nothing.
            notify = rnrNakedSequence >= 0 && state == QpState.READY && !writer.nakPendingLocked();
            if (notify) {
                readyNoticeLocked();
                changed.signalAll();
            }
        } finally {
            lock.unlock();
        }
        if (notify) {
            progress.afterControlQueued();
        }
    }

    /**
     * Tells the requester of the request we last RNR-NAKed that a receive is now posted, so
     * that it resends at once: without this it backs off for our whole RNR timer (1.28 ms by
     * default), which a ring rank whose call starts just after its left neighbour's first
     * message paid for nothing. The receive credit that covers the NAKed request ends the
     * backoff ({@link #grantCreditLocked}). It rides on an ACK of the request before the
     * NAKed one, which the NAK already acknowledged, so nothing completes twice; an ACK
     * already pending carries the credit anyway. Caller holds the lock.
     */
    private void readyNoticeLocked() {
        if (!writer.ackPendingLocked()) {
            writer.requestAckLocked((int) rnrNakedSequence - 1);
        }
        rnrNakedSequence = -1;
        counters.increment(Counter.RNR_READY_NOTICES_SENT);
    }

    /** The writer has just taken an RNR NAK to write: if a receive was posted meanwhile, the notice follows it. Caller holds the lock. */
    void rnrNakWrittenLocked() {
        if (rnrNakedSequence >= 0 && recvPosted > recvConsumed) {
            readyNoticeLocked();
        }
    }

    // ------------------------------------------------------------------ the send queue, for the writer

    TcpSendSlot sendSlot(long index) {
        return sendSlots[(int) (index % sendSlots.length)];
    }

    /**
     * The next request to transmit, taken (its index), or -1: none left, in RNR backoff, or
     * not READY. Ends a backoff whose time is up. Caller holds the lock.
     */
    long nextToTransmitLocked() {
        if (rnrBackoff && rnrBackoffUntilNanos - System.nanoTime() <= 0) {
            rnrBackoff = false;
        }
        if (state == QpState.READY && sendTransmitNext < sendPosted && !rnrBackoff) {
            return sendTransmitNext++;
        }
        return -1;
    }

    /**
     * Whether {@code slot}'s SEND lands in a receive the responder's latest credit covers,
     * large enough for it, within {@link #CREDIT_AHEAD_BYTES} of what it has taken: then it
     * can meet neither an RNR nor a length error, and completes once written. Caller holds
     * the lock.
     */
    boolean underCreditLocked(TcpSendSlot slot) {
        return slot.isSend() && slot.receiveIndex < creditReceives && slot.length <= creditBytes
                && slot.receiveBytesThrough - creditTaken <= CREDIT_AHEAD_BYTES && device.receiveCredits();
    }

    /**
     * The writer put all of request {@code index}, sent under a credit, into the socket: it
     * completes as soon as those before it have. Ignored if a go-back (an RNR NAK of an
     * earlier request) already took it back for retransmission.
     */
    void writtenUnderCredit(long index) {
        lock.lock();
        try {
            if (state == QpState.READY && index >= sendAcked && index < sendTransmitNext) {
                sendSlot(index).written = true;
                completeWrittenLocked();
            }
        } finally {
            lock.unlock();
        }
    }

    /** Completes the credited requests at the head of the send queue that are written. Caller holds the lock. */
    private void completeWrittenLocked() {
        boolean any = false;
        while (sendAcked < sendTransmitNext) {
            TcpSendSlot slot = sendSlot(sendAcked);
            if (!slot.completesOnWrite || !slot.written) {
                break;
            }
            counters.increment(Counter.CREDITED_SENDS); // before the completion a user may poll
            completeOldestLocked();
            any = true;
        }
        if (any) {
            changed.signalAll();
        }
    }

    /** Completes the oldest outstanding send successfully. Caller holds the lock. */
    private void completeOldestLocked() {
        TcpSendSlot slot = sendSlot(sendAcked);
        sendAcked++;
        counters.increment(Counter.MESSAGES_SENT);
        if (slot.signaled) {
            pushSend(slot.wrId, WcStatus.SUCCESS, slot.opcode, slot.length, null);
        }
    }

    /** Whether request {@code index} is the next to transmit and may go now. Caller holds the lock. */
    boolean isNextToTransmitLocked(long index) {
        return sendTransmitNext == index && !rnrBackoff;
    }

    /** Marks request {@code index} (the next) as being transmitted. Caller holds the lock. */
    void takeForTransmitLocked(long index) {
        sendTransmitNext = index + 1;
    }

    boolean hasUntransmittedLocked() {
        return sendTransmitNext < sendPosted;
    }

    /** Whether this queue pair has ever been asked to send: it carries requests both ways. */
    boolean hasSent() {
        return sendPosted != 0;
    }

    /** Racy: for pollers deciding whether to look at the socket at all. */
    boolean hasUntransmitted() {
        return sendTransmitNext < sendPosted;
    }

    /** Racy: whether a request could be written now. */
    boolean mayTransmit() {
        return sendTransmitNext < sendPosted && !rnrBackoff;
    }

    /** When an RNR backoff that holds back queued requests ends, or Long.MAX_VALUE. Caller holds the lock. */
    long rnrBackoffEndsLocked() {
        return state == QpState.READY && sendTransmitNext < sendPosted ? rnrBackoffUntilNanos : Long.MAX_VALUE;
    }

    // ------------------------------------------------------------------ for the frame reader

    /** The memory region an incoming RDMA WRITE names, if it exists and belongs to this queue pair's PD. */
    TcpMemoryRegion writeTarget(int rkey) {
        TcpMemoryRegion target = device.regionByKey(rkey);
        return target != null && target.pd() == pd && target.rkey() == rkey ? target : null;
    }

    /** Takes the oldest posted receive for an incoming request, or null (the requester gets an RNR NAK). */
    TcpRecvSlot takeRecv() {
        lock.lock();
        try {
            if (recvConsumed >= recvPosted) {
                return null;
            }
            TcpRecvSlot recv = recvSlots[(int) (recvConsumed % recvSlots.length)];
            recvConsumed++;
            rnrNakedSequence = -1; // the requester is back (retransmitted after its timer)
            return recv;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Writes the receive credit to grant the peer into {@code frame} (an ACK or a SEND): the
     * receives posted (at most {@link #MAX_CREDITED_AHEAD} beyond those consumed), the
     * smallest capacity among those waiting, and the payload bytes taken into receives so
     * far. Caller holds the lock.
     */
    void creditLocked(FrameHeader frame) {
        long end = Math.min(recvPosted, recvConsumed + MAX_CREDITED_AHEAD);
        long smallest = recvConsumed < end ? Integer.MAX_VALUE : 0;
        for (long i = recvConsumed; i < end; i++) {
            smallest = Math.min(smallest, recvSlots[(int) (i % recvSlots.length)].capacity);
        }
        frame.credit(end, (int) smallest, reader.bytesTaken());
    }

    /** Asks the write side to acknowledge requests up to {@code sequence} (ACKs coalesce). */
    void acknowledge(int sequence) {
        lock.lock();
        try {
            writer.requestAckLocked(sequence);
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    void nak(byte status, int sequence, int aux) {
        lock.lock();
        try {
            if (status == FrameHeader.STATUS_RNR) {
                rnrNakedSequence = sequence & 0xFFFF_FFFFL;
            }
            writer.requestNakLocked(status, sequence, aux);
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** An ACK of requests up to {@code sequence}, granting the receive credit it carries. */
    void onAck(int sequence, int creditReceivesMod32, int creditBytes, long creditTaken) {
        lock.lock();
        try {
            grantCreditLocked(creditReceivesMod32, creditBytes, creditTaken);
            ackUpTo(sequence);
        } finally {
            lock.unlock();
        }
    }

    /** The receive credit a request from the peer carries. */
    void grantCredit(int creditReceivesMod32, int creditBytes, long creditTaken) {
        lock.lock();
        try {
            grantCreditLocked(creditReceivesMod32, creditBytes, creditTaken);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Takes the peer's latest credit: frames arrive in the order the peer wrote them, so the
     * latest describes the receives still waiting when it left, which covers every request
     * not yet sent. Caller holds the lock.
     */
    private void grantCreditLocked(int creditReceivesMod32, int creditBytes, long creditTaken) {
        long credit = creditReceives + (creditReceivesMod32 - (int) creditReceives);
        if (credit >= creditReceives) {
            creditReceives = credit;
            this.creditBytes = creditBytes;
            this.creditTaken = Math.max(this.creditTaken, creditTaken);
        }
        if (rnrBackoff && sendAcked < sendPosted && sendSlot(sendAcked).receiveIndex >= 0
                && sendSlot(sendAcked).receiveIndex < creditReceives) {
            // The responder has posted the receive our NAKed request wants: resend now rather
            // than when its RNR timer runs out (postRecv on the responder's side).
            rnrBackoff = false;
            counters.increment(Counter.RNR_WAITS_CUT);
            changed.signalAll();
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
            completeOldestLocked();
        }
        completeWrittenLocked();
        changed.signalAll();
    }

    void onNak(byte status, int sequence, int aux) {
        lock.lock();
        try {
            if (state != QpState.READY) {
                return;
            }
            ackUpTo(sequence - 1); // a NAK acknowledges everything before it, as in RC
            boolean credited = sequence == (int) sendAcked && sendAcked < sendTransmitNext
                    && sendSlot(sendAcked).completesOnWrite;
            if (sequence - (int) sendAcked < 0 || credited) {
                // Only a request sent under a receive credit can have completed before its
                // answer: the responder broke its credit, or its receive failed (a memory error).
                failLocked(status == FrameHeader.STATUS_REMOTE_ACCESS ? WcStatus.REM_ACCESS_ERR : WcStatus.REM_INV_REQ_ERR,
                        "peer " + remoteEndpoint + " refused request " + sequence + " (NAK status " + status
                                + "), sent under the receive credit it had granted");
                return;
            }
            if (sequence != (int) sendAcked || sendAcked == sendTransmitNext) {
                counters.increment(Counter.DROP_UNEXPECTED);
                return;
            }
            TcpSendSlot slot = sendSlot(sendAcked);
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
                rnrBackoffUntilNanos = System.nanoTime() + aux * 1000L;
                rnrBackoff = true;
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

    // ------------------------------------------------------------------ for the stall watch

    /** Whether a transmitted request awaits its ACK (not idle, not in RNR backoff). Caller holds the lock. */
    boolean awaitsAckLocked() {
        return sendTransmitNext != sendAcked && !rnrBackoff;
    }

    /** A number that grows whenever anything moved: ACKs, bytes written, bytes read. Caller holds the lock. */
    long progressMarkLocked() {
        return sendAcked + writer.bytesWritten() + reader.bytesRead();
    }

    /** The stall watch gave up on the peer; returns the connection to close outside the lock. */
    SocketChannel failStalledLocked(String detail) {
        failLocked(WcStatus.RETRY_EXC_ERR, detail);
        return channel;
    }

    // ------------------------------------------------------------------ polled progress

    /**
     * Whether a transmitted request awaits its ACK or an RNR backoff its end: read without the
     * lock by the device's fallback, for which a stale answer only means one look sooner or
     * later than needed.
     */
    boolean awaitsPeerRacy() {
        return sendTransmitNext != sendAcked || rnrBackoff;
    }

    /**
     * Polled progress, called by a poller of one of this queue pair's completion queues:
     * reads what arrived and writes what the socket takes, never blocking. True if anything
     * moved. Safe from several threads at once (each side has one owner at a time).
     */
    boolean progress() {
        return progress.progress();
    }

    /**
     * The device's fallback: progress for a queue pair nobody has polled for
     * {@code idleNanos}, as an RC NIC keeps answering while its application computes.
     * Returns the nanoseconds until it next wants to be asked ({@link Long#MAX_VALUE}: never).
     */
    long driveIfIdle(long now, long idleNanos) {
        return progress.driveIfIdle(now, idleNanos);
    }

    /**
     * Whether a poller waiting for I/O must also wait for the socket to take more bytes.
     * Read without the lock: a stale answer costs one spurious or one late (by the poller's
     * longest wait) wake-up, never a lost frame.
     */
    boolean wantsWrite() {
        return writer.wantsWrite();
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
        stallWatch.cancelLocked();
        LOG.info("QP {} ({} -> {}) entered ERROR: {}", qpn, localEndpoint, remoteEndpoint, detail);
        flushLocked(firstStatus, detail);
    }

    private void flushLocked(WcStatus firstStatus, String detail) {
        boolean first = firstStatus != null;
        while (sendAcked < sendPosted) {
            TcpSendSlot slot = sendSlot(sendAcked);
            sendAcked++;
            pushSend(slot.wrId, first ? firstStatus : WcStatus.WR_FLUSH_ERR, slot.opcode, 0,
                    first ? detail : "flushed: " + detail);
            first = false;
        }
        sendTransmitNext = sendPosted;
        while (recvConsumed < recvPosted) {
            TcpRecvSlot slot = recvSlots[(int) (recvConsumed % recvSlots.length)];
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
            stallWatch.cancelLocked();
            ch = channel;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
        connector.close();
        TcpDevice.closeQuietly(ch);
        progress.stop();
        device.forget(this);
        LOG.debug("QP {} closed; counters {}", qpn, counters);
    }

    @Override
    public String toString() {
        return "tcp QP " + qpn + " " + localEndpoint + " -> " + remoteEndpoint + " " + state;
    }
}
