package io.netreduce.verbs.soft;

import io.netreduce.verbs.support.ScatterGather;
import io.netreduce.wire.roce.RoceAddressing;

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
import io.netreduce.verbs.SendRequest;
import io.netreduce.verbs.VerbsException;
import io.netreduce.verbs.WcOpcode;
import io.netreduce.verbs.WcStatus;
import io.netreduce.wire.roce.IcrcTemplate;
import io.netreduce.wire.roce.Ipv4UdpHeader;
import io.netreduce.wire.roce.Opcode;
import io.netreduce.wire.roce.RoceFrame;
import io.netty.channel.Channel;
import io.netty.channel.EventLoop;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An RC queue pair of the soft provider. It owns a UDP socket bound to the device address
 * at its fixed source port {@link RoceAddressing#sourcePort(int)}, from which every packet it sends
 * leaves (requests and ACKs alike). Protocol state lives in its {@link Requester} and
 * {@link Responder} and is touched only by whoever runs the device's protocol (its event
 * loop, or where callers drive, the thread holding the device's lock); user threads hand
 * work over through the send and receive rings, and where callers drive a poster that finds
 * the lock free sends its request at once.
 */
final class SoftQueuePair implements QueuePair {
    private static final Logger LOG = LoggerFactory.getLogger(SoftQueuePair.class);

    private final SoftDevice device;
    private final SoftProtectionDomain pd;
    private final QpAttributes attributes;
    private final int qpn;
    /** The queue pair's socket: Netty's channel, or null where {@link #fd} (native) is used. */
    private final Channel channel;
    private final int fd;
    private final EventLoop loop;
    private final Counters counters = new Counters();
    private final WorkRing<SendWqe> sendRing;
    private final WorkRing<RecvWqe> recvRing;
    private final Requester requester;
    private final Responder responder;
    private final SoftCompletionQueue sendCq;
    private final SoftCompletionQueue recvCq;
    private final QpEndpoint localEndpoint;
    private final IcrcTemplate icrc = new IcrcTemplate();
    /** The masked canonical header of the peer's packets to this queue pair ({@link IcrcTemplate}), built on connecting. */
    private byte[] receiveTemplate;
    private final AtomicBoolean pumpScheduled = new AtomicBoolean();
    private final Runnable pumpTask;
    /** Sends the ACK the device kept back for this queue pair ({@link #releaseHeldAck}), under the protocol lock. */
    final Runnable releaseAckTask;
    private final Runnable pumpNow = this::pump;

    private volatile QpState state = QpState.INIT;
    private volatile QpEndpoint remoteEndpoint;
    private Egress egress;
    private boolean dirty;
    /** A receive completed since the last end of batch (where callers drive, its ACK may wait). */
    private boolean recvCompleted;
    private int remoteIp;
    private int remotePort;
    private int localIp;
    private int localPort;

    /** {@code channel} is the queue pair's socket, or null and {@code fd} is (a native socket). */
    SoftQueuePair(SoftDevice device, SoftProtectionDomain pd, QpAttributes attributes, int qpn, Channel channel,
                  int fd, SendSettings sendSettings) {
        this.device = device;
        this.pd = pd;
        this.attributes = attributes;
        this.qpn = qpn;
        this.channel = channel;
        this.fd = fd;
        this.loop = device.eventLoop();
        this.pumpTask = device.guarded(this::runPump);
        this.releaseAckTask = () -> device.sendDeferredAckOf(this);
        this.sendCq = cq(device, attributes.sendCq(), "send");
        this.recvCq = cq(device, attributes.recvCq(), "receive");
        int sge = attributes.maxSge();
        this.sendRing = new WorkRing<>(attributes.maxSendWr(), i -> new SendWqe(sge));
        this.recvRing = new WorkRing<>(attributes.maxRecvWr(), i -> new RecvWqe(sge));
        this.requester = new Requester(this, sendRing, attributes, sendSettings, counters);
        this.responder = new Responder(this, recvRing, attributes.mtu(), attributes.minRnrTimer().toNanos() / 1000,
                counters);
        int psn = attributes.initialPsn() >= 0 ? attributes.initialPsn()
                : ThreadLocalRandom.current().nextInt(1 << 24);
        this.localEndpoint = new QpEndpoint(device.options().localAddress(), device.port(), qpn, psn);
    }

    /**
     * As in ibverbs, a queue pair's completion queues belong to its own device: polling one is
     * what drives its device where callers run the protocol.
     */
    private static SoftCompletionQueue cq(SoftDevice device, Object cq, String what) {
        if (!(cq instanceof SoftCompletionQueue q)) {
            throw new VerbsException("the " + what + " completion queue was not created by a soft device");
        }
        if (q.device() != device) {
            throw new VerbsException("the " + what + " completion queue belongs to another soft device; create it "
                    + "with the queue pair's own device");
        }
        return q;
    }

    SoftProtectionDomain pd() {
        return pd;
    }

    EventLoop eventLoop() {
        return loop;
    }

    /** Whether the device's callers run the protocol ({@link SoftDevice#callerDrives()}). */
    boolean callerDrives() {
        return device.callerDrives();
    }

    /** {@code task} as the event loop must run it ({@link SoftDevice#guarded}). */
    Runnable guarded(Runnable task) {
        return device.guarded(task);
    }

    /** Runs the timers due at {@code now}; when the next is due (Long.MAX_VALUE: none). */
    long runDueTimers(long now) {
        return state == QpState.READY ? requester.runDueTimers(now) : Long.MAX_VALUE;
    }

    boolean isReady() {
        return state == QpState.READY;
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
    public void releaseHeldAck() {
        device.releaseDeferredAck(this);
    }

    @Override
    public Counters counters() {
        return counters;
    }

    @Override
    public void connect(QpEndpoint remote, Duration timeout) {
        Objects.requireNonNull(remote, "remote endpoint");
        Objects.requireNonNull(timeout, "timeout");
        if (state != QpState.INIT) {
            throw new VerbsException("queue pair " + qpn + " cannot connect in state " + state);
        }
        int rip = Ipv4UdpHeader.toInt(remote.address());
        InetSocketAddress gateway = device.options().gateway();
        InetSocketAddress nextHop = gateway != null ? gateway : new InetSocketAddress(remote.address(), remote.port());
        device.onLoop(() -> {
            remoteIp = rip;
            remotePort = remote.port();
            localIp = device.localIp();
            localPort = device.port();
            int sport = RoceAddressing.sourcePort(qpn);
            receiveTemplate = IcrcTemplate.template(rip, localIp, RoceAddressing.sourcePort(remote.qpn()), localPort);
            egress = channel != null
                    ? new NettyEgress(channel, device.allocator(), nextHop, localIp, sport, rip, remote.port(),
                            device.gso(), device.egressFaults(), device.pcap(), counters, device.counters())
                    : new NativeEgress(fd, Ipv4UdpHeader.toInt(nextHop.getAddress()), nextHop.getPort(), localIp, sport,
                            rip, remote.port(), device.gso(), device.gatherMinBytes(), device.egressFaults(),
                            device.pcap(), counters, device.counters());
            requester.connect(egress, remote.qpn(), localEndpoint.initialPsn());
            responder.connect(egress, device, remote.qpn(), remote.initialPsn());
            remoteEndpoint = remote;
            state = QpState.READY;
            markDirty();
            endOfBatch();
        }, timeout, "connect queue pair " + qpn + " to " + remote);
        LOG.debug("QP {} connected to {} (next hop {})", qpn, remote, nextHop);
    }

    @Override
    public void postSend(SendRequest request) {
        Objects.requireNonNull(request, "send request");
        QpState s = state;
        if (s == QpState.INIT || s == QpState.RESET) {
            throw new VerbsException("queue pair " + qpn + " is not connected (state " + s + "); connect it first");
        }
        if (s == QpState.CLOSED) {
            throw new VerbsException("queue pair " + qpn + " is closed");
        }
        long total = ScatterGather.check(qpn, request.sgl(), attributes.maxSge(), pd, false);
        if (total > Integer.MAX_VALUE) {
            throw new VerbsException("QP " + qpn + ": message of " + total + " bytes exceeds the 2 GiB RC limit");
        }
        synchronized (sendRing.producerLock()) {
            SendWqe w = sendRing.claim();
            if (w == null) {
                throw new VerbsException("send queue of queue pair " + qpn + " is full (" + sendRing.capacity()
                        + " outstanding requests)");
            }
            w.fill(request, attributes.mtu());
            sendRing.publish();
        }
        if (!device.tryRun(pumpNow)) {
            schedulePump();
        }
    }

    @Override
    public void postRecv(RecvRequest request) {
        Objects.requireNonNull(request, "receive request");
        QpState s = state;
        if (s == QpState.CLOSED || s == QpState.RESET) {
            throw new VerbsException("queue pair " + qpn + " cannot take receives in state " + s);
        }
        ScatterGather.check(qpn, request.sgl(), attributes.maxSge(), pd, true);
        synchronized (recvRing.producerLock()) {
            RecvWqe w = recvRing.claim();
            if (w == null) {
                throw new VerbsException("receive queue of queue pair " + qpn + " is full (" + recvRing.capacity()
                        + " posted requests)");
            }
            w.fill(request);
            recvRing.publish();
        }
        if (state == QpState.ERROR) {
            schedulePump();
        }
    }

    private void schedulePump() {
        if (pumpScheduled.compareAndSet(false, true)) {
            loop.execute(pumpTask);
        }
    }

    private void runPump() {
        pumpScheduled.set(false);
        pump();
    }

    private void pump() {
        QpState s = state;
        if (s == QpState.READY) {
            requester.pump();
        }
        if (callerDrives()) {
            // Held ACKs go now; this queue pair's behind its data, in the same sendmmsg: the
            // peer handles the request first.
            device.sendDeferredAcks(this);
        }
        if (s == QpState.READY) {
            egress.flush();
        } else if (s == QpState.ERROR) {
            flushAll(WcStatus.WR_FLUSH_ERR, -1);
        }
    }

    /** A packet addressed to this queue pair, already parsed (by whoever runs the protocol). */
    void onPacket(RoceFrame frame) {
        if (state != QpState.READY) {
            counters.increment(Counter.DROP_BAD_STATE);
            return;
        }
        if (!icrc.verify(receiveTemplate, frame.buffer(), frame.offset(), frame.length())) {
            counters.increment(Counter.DROP_BAD_ICRC);
            return;
        }
        if (Opcode.isRequest(frame.opcode())) {
            responder.onRequest(frame);
        } else {
            requester.onResponse(frame);
        }
    }

    /** Asks for {@link #endOfBatch()} at the end of the current burst. */
    void markDirty() {
        if (!dirty) {
            dirty = true;
            device.markDirty(this);
        }
    }

    /** End of a burst: send the coalesced ACK, whatever the window now allows, and flush. */
    void endOfBatch() {
        dirty = false;
        recvCompleted = false;
        if (state == QpState.READY) {
            responder.flushAck();
            requester.pump();
        }
        if (egress != null) {
            egress.flush();
        }
    }

    /**
     * {@link #endOfBatch()} of a caller's drive: if a receive completed in the burst and this
     * queue pair sends too (requests both ways, as a ping-pong), the ACK is kept back (see
     * {@link SoftDevice}'s drive) and true returned. A queue pair that only receives (a
     * ring's link from its left neighbour) ACKs at once: nothing of its own would carry it.
     */
    boolean endOfBatchKeepingAck() {
        if (!recvCompleted || state != QpState.READY || sendRing.posted() == 0) {
            endOfBatch();
            return false;
        }
        dirty = false;
        recvCompleted = false;
        requester.pump();
        egress.flush();
        return true;
    }

    /** Queues the ACK {@link #endOfBatchKeepingAck()} kept back, and sends it if {@code flush}. */
    void sendDeferredAck(boolean flush) {
        if (state == QpState.READY) {
            responder.flushAck();
        }
        if (flush && egress != null) {
            egress.flush();
        }
    }

    void completeSend(long wrId, WcStatus status, WcOpcode opcode, int length, String detail) {
        if (!sendCq.push(wrId, status, opcode, length, false, 0, qpn, detail)) {
            overflow("send");
        }
    }

    void completeRecv(long wrId, WcStatus status, WcOpcode opcode, int length, boolean hasImm, int imm,
                      String detail) {
        recvCompleted = true;
        if (!recvCq.push(wrId, status, opcode, length, hasImm, imm, qpn, detail)) {
            overflow("receive");
        }
    }

    private void overflow(String which) {
        LOG.error("QP {} (peer {}): {} completion queue overflowed (capacity {}); completions are lost", qpn,
                remoteEndpoint, which, which.equals("send") ? sendCq.capacity() : recvCq.capacity());
        if (state == QpState.READY) {
            fail(WcStatus.GENERAL_ERR, which + " completion queue overflow", -1);
        }
    }

    /**
     * Moves the queue pair to ERROR: the send WQE at {@code failedIndex} (if
     * any) completes with {@code status}, every other outstanding request with WR_FLUSH_ERR.
     */
    void fail(WcStatus status, String reason, long failedIndex) {
        if (state != QpState.READY) {
            return;
        }
        state = QpState.ERROR;
        LOG.warn("QP {} (peer {}) entered the error state: {} ({}); counters {}, device counters {}", qpn,
                remoteEndpoint, status, reason, counters, device.counters());
        flushAll(status, failedIndex);
        if (egress != null) {
            egress.flush();
        }
    }

    private void flushAll(WcStatus status, long failedIndex) {
        long posted = sendRing.posted();
        for (long i = requester.compIndex(); i < posted; i++) {
            SendWqe w = sendRing.at(i);
            WcStatus st = i == failedIndex ? status : WcStatus.WR_FLUSH_ERR;
            completeSend(w.wrId, st, w.opcode.isRdmaWrite() ? WcOpcode.RDMA_WRITE : WcOpcode.SEND, 0,
                    st == WcStatus.WR_FLUSH_ERR ? "queue pair " + qpn + " is in the error state" : "");
        }
        requester.retireAll(posted);
        long rposted = recvRing.posted();
        for (long i = responder.consumed(); i < rposted; i++) {
            completeRecv(recvRing.at(i).wrId, WcStatus.WR_FLUSH_ERR, WcOpcode.RECV, 0, false, 0,
                    "queue pair " + qpn + " is in the error state");
        }
        responder.retireAll(rposted);
    }

    @Override
    public void close() {
        if (state == QpState.CLOSED) {
            return;
        }
        try {
            device.onLoop(() -> {
                if (state == QpState.CLOSED) {
                    return;
                }
                if (state == QpState.READY) {
                    state = QpState.ERROR;
                }
                flushAll(WcStatus.WR_FLUSH_ERR, -1);
                state = QpState.CLOSED;
                if (egress != null) {
                    egress.flush();
                }
                device.unregister(this);
                LOG.debug("QP {} closed; counters {}", qpn, counters);
                if (channel != null) {
                    channel.close();
                } else {
                    io.netreduce.wire.udp.NativeUdp.close(fd);
                }
            }, Duration.ofSeconds(5), "close queue pair " + qpn);
        } finally {
            state = QpState.CLOSED;
            pd.forget(this);
        }
    }

    @Override
    public String toString() {
        return "SoftQueuePair{qpn=" + qpn + ", state=" + state + ", local=" + localEndpoint + ", remote="
                + remoteEndpoint + "}";
    }
}
