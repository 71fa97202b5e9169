package io.netreduce.verbs.disni;

import io.netreduce.verbs.support.ScatterGather;
import com.ibm.disni.verbs.IbvQP;
import com.ibm.disni.verbs.IbvQPInitAttr;
import com.ibm.disni.verbs.IbvRecvWR;
import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.IbvSge;
import com.ibm.disni.verbs.RdmaCm;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.RdmaConnParam;
import com.ibm.disni.verbs.SVCPostRecv;
import com.ibm.disni.verbs.SVCPostSend;
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
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An RC queue pair on real RDMA hardware, connected through RDMA CM.
 *
 * <p>With RDMA CM the hardware QP can only be created once the route to the peer is known
 * (active side) or its connect request arrived (passive side). So until {@link #connect}
 * this object is a placeholder with a logical QPN (the one in its {@link QpEndpoint});
 * receives posted in INIT are kept and posted to the hardware QP as soon as it exists,
 * before the connection is accepted or requested. The side with the lower
 * (address, port, qpn) is active and dials the other's CM listen address; each CM step
 * (resolve address, resolve route, connect, accept, established) has its own deadline and
 * fails with an exception naming the peer and the step.
 *
 * <p>Posting reuses DiSNI's stateful verb calls: one {@link SVCPostSend} per (opcode,
 * SGE count) whose WR fields are rewritten in place, and {@link SVCPostRecv}s cached by
 * wrId slot (DiSNI cannot rewrite a receive's SGEs; reposting the same request, the usual
 * pattern, allocates nothing).
 */
final class DisniQueuePair implements QueuePair {
    private static final Logger LOG = LoggerFactory.getLogger(DisniQueuePair.class);

    private final DisniDevice device;
    private final DisniProtectionDomain pd;
    private final int qpn;
    private final QpAttributes attributes;
    private final DisniCompletionQueue sendCq;
    private final DisniCompletionQueue recvCq;
    private final QpEndpoint localEndpoint;
    private final Counters counters = new Counters();
    private final LinkedBlockingQueue<Integer> cmEvents = new LinkedBlockingQueue<>();
    private final LinkedBlockingQueue<RdmaCmId> connectRequests = new LinkedBlockingQueue<>();
    private final List<long[]> bufferedRecvs = new ArrayList<>();

    private volatile QpState state = QpState.INIT;
    private volatile QpEndpoint remoteEndpoint;
    private volatile QpEndpoint connecting;
    private volatile int hardwareQpn = -1;
    private RdmaCmId cmId;
    private IbvQP qp;

    private final SVCPostSend[][] sendCalls;
    private final int[][] sendCallImmediates;
    private final CachedRecv[] recvCalls;

    DisniQueuePair(DisniDevice device, DisniProtectionDomain pd, int qpn, QpAttributes attributes) {
        this.device = device;
        this.pd = pd;
        this.qpn = qpn;
        this.attributes = attributes;
        this.sendCq = (DisniCompletionQueue) attributes.sendCq();
        this.recvCq = (DisniCompletionQueue) attributes.recvCq();
        int psn = attributes.initialPsn() >= 0 ? attributes.initialPsn() : ThreadLocalRandom.current().nextInt(1 << 24);
        InetSocketAddress b = device.boundAddress();
        this.localEndpoint = new QpEndpoint(b.getAddress(), b.getPort(), qpn, psn);
        this.sendCalls = new SVCPostSend[SendOpcode.values().length][attributes.maxSge() + 1];
        this.sendCallImmediates = new int[SendOpcode.values().length][attributes.maxSge() + 1];
        this.recvCalls = new CachedRecv[attributes.maxRecvWr()];
        sendCq.attach(this, true, false);
        recvCq.attach(this, false, true);
    }

    @Override
    public int qpn() {
        return qpn;
    }

    int hardwareQpn() {
        return hardwareQpn;
    }

    QpEndpoint connectingTo() {
        return connecting;
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

    @Override
    public void connect(QpEndpoint remote, Duration timeout) {
        Objects.requireNonNull(remote, "remote endpoint");
        long deadline = System.nanoTime() + Math.max(0, timeout.toNanos());
        synchronized (this) {
            if (state != QpState.INIT || connecting != null) {
                throw new VerbsException("QP " + qpn + " cannot connect to " + remote + ": it is " + state);
            }
            connecting = remote;
        }
        boolean active = compare(localEndpoint, remote) < 0;
        try {
            if (active) {
                connectActive(remote, deadline);
            } else {
                connectPassive(remote, deadline);
            }
            synchronized (this) {
                remoteEndpoint = remote;
                state = QpState.READY;
            }
            LOG.info("QP {} (hardware QPN {}) connected {} -> {}", qpn, hardwareQpn, localEndpoint, remote);
        } catch (RuntimeException e) {
            device.stopWaiting(this);
            teardownHardware();
            connecting = null;
            throw e;
        }
    }

    private void connectActive(QpEndpoint remote, long deadline) {
        InetSocketAddress src = new InetSocketAddress(localEndpoint.address(), 0);
        InetSocketAddress dst = new InetSocketAddress(remote.address(), remote.port());
        try {
            cmId = device.eventChannel().createId(RdmaCm.RDMA_PS_TCP);
            device.own(cmId, this);
            cmId.resolveAddr(src, dst, stepMs(deadline, remote, "resolve address"));
            await(DisniMapping.CM_ADDR_RESOLVED, remote, "resolve address", deadline);
            cmId.resolveRoute(stepMs(deadline, remote, "resolve route"));
            await(DisniMapping.CM_ROUTE_RESOLVED, remote, "resolve route", deadline);
            createHardwareQp(cmId);
            cmId.connect(connParam());
            await(DisniMapping.CM_ESTABLISHED, remote, "connect", deadline);
        } catch (IOException e) {
            throw failure(remote, "active connect", e.toString(), e);
        }
    }

    private void connectPassive(QpEndpoint remote, long deadline) {
        RdmaCmId request = device.awaitRequests(this, remote);
        try {
            if (request == null) {
                long remaining = deadline - System.nanoTime();
                request = remaining > 0 ? connectRequests.poll(remaining, TimeUnit.NANOSECONDS) : null;
                if (request == null) {
                    throw failure(remote, "wait for connect request", "the peer did not connect to "
                            + device.boundAddress() + " in time", null);
                }
            }
            cmId = request;
            device.own(cmId, this);
            createHardwareQp(cmId);
            cmId.accept(connParam());
            await(DisniMapping.CM_ESTABLISHED, remote, "accept", deadline);
        } catch (IOException e) {
            throw failure(remote, "accept", e.toString(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw failure(remote, "wait for connect request", "interrupted", e);
        }
    }

    void onConnectRequest(RdmaCmId id) {
        connectRequests.add(id);
    }

    void onCmEvent(int type) {
        if (state == QpState.READY && (type == DisniMapping.CM_DISCONNECTED || type == DisniMapping.CM_DEVICE_REMOVAL)) {
            // RDMA CM has moved the hardware QP to ERR: it flushes outstanding work itself.
            LOG.info("QP {} to {}: {}", qpn, remoteEndpoint, DisniMapping.cmEventName(type));
            state = QpState.ERROR;
            return;
        }
        cmEvents.add(type);
    }

    void onErrorCompletion(String detail) {
        if (state == QpState.READY) {
            LOG.info("QP {} entered ERROR: {}", qpn, detail);
            state = QpState.ERROR;
        }
    }

    void onSuccessCompletion(WcOpcode opcode, int bytes) {
        if (opcode == WcOpcode.RECV || opcode == WcOpcode.RECV_RDMA_WITH_IMM) {
            counters.increment(Counter.MESSAGES_RECEIVED);
            counters.add(Counter.BYTES_RECEIVED, bytes);
        } else {
            counters.increment(Counter.MESSAGES_SENT);
            counters.add(Counter.BYTES_SENT, bytes);
        }
    }

    private void await(int expected, QpEndpoint remote, String step, long deadline) {
        try {
            while (true) {
                long remaining = deadline - System.nanoTime();
                Integer event = remaining > 0 ? cmEvents.poll(remaining, TimeUnit.NANOSECONDS) : null;
                if (event == null) {
                    throw failure(remote, step, "no " + DisniMapping.cmEventName(expected) + " before the deadline", null);
                }
                if (event == expected) {
                    return;
                }
                if (event == DisniMapping.CM_TIMEWAIT_EXIT || event == DisniMapping.CM_CONNECT_RESPONSE) {
                    continue;
                }
                throw failure(remote, step, "got " + DisniMapping.cmEventName(event) + " instead of "
                        + DisniMapping.cmEventName(expected), null);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw failure(remote, step, "interrupted", e);
        }
    }

    private int stepMs(long deadline, QpEndpoint remote, String step) {
        long ms = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
        if (ms <= 0) {
            throw failure(remote, step, "deadline passed before the step started", null);
        }
        return (int) Math.min(Integer.MAX_VALUE, ms);
    }

    private VerbsException failure(QpEndpoint remote, String step, String what, Throwable cause) {
        return new VerbsException("QP " + qpn + ": connecting to peer " + remote + " failed at step '" + step + "': "
                + what, cause);
    }

    private void createHardwareQp(RdmaCmId id) throws IOException {
        IbvQPInitAttr attr = new IbvQPInitAttr();
        attr.cap().setMax_send_wr(attributes.maxSendWr());
        attr.cap().setMax_recv_wr(attributes.maxRecvWr());
        attr.cap().setMax_send_sge(attributes.maxSge());
        attr.cap().setMax_recv_sge(attributes.maxSge());
        attr.cap().setMax_inline_data(0);
        attr.setQp_type(IbvQP.IBV_QPT_RC);
        attr.setSend_cq(sendCq.ibvCq());
        attr.setRecv_cq(recvCq.ibvCq());
        synchronized (this) {
            qp = id.createQP(pd.ibvPd(), attr);
            if (qp == null) {
                throw new IOException("rdma_create_qp returned no queue pair (is the route's device the one the "
                        + "protection domain was allocated on?)");
            }
            hardwareQpn = qp.getQp_num();
            for (long[] r : bufferedRecvs) {
                postRecvNow(r);
            }
            bufferedRecvs.clear();
        }
    }

    /**
     * Retry and RNR-retry counts travel in the CM connection parameters. Path MTU, ACK timeout
     * and the minimum RNR timer are chosen by RDMA CM and the port, not by these attributes.
     */
    private RdmaConnParam connParam() throws IOException {
        RdmaConnParam p = new RdmaConnParam();
        p.setRetry_count((byte) attributes.retryCount());
        p.setRnr_retry_count((byte) attributes.rnrRetry());
        p.setInitiator_depth((byte) 1);
        p.setResponder_resources((byte) 1);
        return p;
    }

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
        ScatterGather.check(qpn, sgl, attributes.maxSge(), pd, false);
        synchronized (this) {
            if (state != QpState.READY && state != QpState.ERROR) {
                throw new VerbsException("QP " + qpn + " is " + state + ": connect it before posting sends");
            }
            SendOpcode op = request.opcode();
            int n = sgl.count();
            try {
                SVCPostSend call = sendCalls[op.ordinal()][n];
                if (call == null || (op.hasImmediate() && sendCallImmediates[op.ordinal()][n] != request.immediate())) {
                    if (call != null) {
                        call.free();
                    }
                    call = buildSend(op, n, request.immediate());
                    sendCalls[op.ordinal()][n] = call;
                    sendCallImmediates[op.ordinal()][n] = request.immediate();
                }
                SVCPostSend.SendWRMod wr = call.getWrMod(0);
                wr.setWr_id(request.wrId());
                wr.setSend_flags((request.signaled() ? DisniMapping.SEND_SIGNALED : 0)
                        | (request.solicited() ? DisniMapping.SEND_SOLICITED : 0));
                for (int i = 0; i < n; i++) {
                    SVCPostSend.SgeMod sge = wr.getSgeMod(i);
                    sge.setAddr(sgl.region(i).address() + sgl.offset(i));
                    sge.setLength(sgl.length(i));
                    sge.setLkey(sgl.region(i).lkey());
                }
                if (op.isRdmaWrite()) {
                    wr.getRdmaMod().setRemote_addr(request.remoteAddress());
                    wr.getRdmaMod().setRkey(request.rkey());
                }
                call.execute();
            } catch (IOException e) {
                throw new VerbsException("QP " + qpn + ": ibv_post_send failed (send queue full, or the queue pair "
                        + "is in the wrong state): " + e.getMessage(), e);
            }
        }
    }

    private SVCPostSend buildSend(SendOpcode op, int sgeCount, int immediate) throws IOException {
        IbvSendWR wr = new IbvSendWR();
        wr.setOpcode(DisniMapping.sendOpcode(op));
        wr.setSend_flags(DisniMapping.SEND_SIGNALED);
        wr.setImm_data(immediate);
        LinkedList<IbvSge> sges = new LinkedList<>();
        for (int i = 0; i < sgeCount; i++) {
            sges.add(new IbvSge());
        }
        wr.setSg_list(sges);
        wr.setNum_sge(sgeCount);
        List<IbvSendWR> list = new ArrayList<>(1);
        list.add(wr);
        return qp.postSend(list, null);
    }

    @Override
    public void postRecv(RecvRequest request) {
        Objects.requireNonNull(request, "receive request");
        ScatterGatherList sgl = request.sgl();
        ScatterGather.check(qpn, sgl, attributes.maxSge(), pd, true);
        synchronized (this) {
            if (state == QpState.CLOSED) {
                throw new VerbsException("QP " + qpn + " is closed: cannot post receives");
            }
            if (qp == null) {
                if (bufferedRecvs.size() == attributes.maxRecvWr()) {
                    throw new VerbsException("QP " + qpn + ": receive queue full (" + attributes.maxRecvWr() + ")");
                }
                bufferedRecvs.add(recvKey(request.wrId(), sgl));
                return;
            }
            try {
                int slot = (int) Math.floorMod(request.wrId(), (long) recvCalls.length);
                CachedRecv cached = recvCalls[slot];
                if (cached != null && cached.matches(request.wrId(), sgl)) {
                    cached.call.execute(); // the usual repost of the same request: nothing allocated
                } else {
                    postRecvNow(recvKey(request.wrId(), sgl));
                }
            } catch (IOException e) {
                throw new VerbsException("QP " + qpn + ": ibv_post_recv failed (receive queue full?): " + e.getMessage(), e);
            }
        }
    }

    /** {wrId, (address, length, lkey) per SGE}: what a receive posts, and the key of its cached call. */
    private static long[] recvKey(long wrId, ScatterGatherList sgl) {
        long[] r = new long[1 + 3 * sgl.count()];
        r[0] = wrId;
        for (int i = 0; i < sgl.count(); i++) {
            r[1 + 3 * i] = sgl.region(i).address() + sgl.offset(i);
            r[2 + 3 * i] = sgl.length(i);
            r[3 + 3 * i] = sgl.region(i).lkey();
        }
        return r;
    }

    /** Posts {wrId, (addr, len, lkey)*} through a cached call when the same request was posted before. */
    private void postRecvNow(long[] r) throws IOException {
        int slot = (int) Math.floorMod(r[0], (long) recvCalls.length);
        CachedRecv cached = recvCalls[slot];
        if (cached == null || !java.util.Arrays.equals(cached.key, r)) {
            if (cached != null) {
                cached.call.free();
            }
            IbvRecvWR wr = new IbvRecvWR();
            wr.setWr_id(r[0]);
            LinkedList<IbvSge> sges = new LinkedList<>();
            for (int i = 1; i < r.length; i += 3) {
                IbvSge sge = new IbvSge();
                sge.setAddr(r[i]);
                sge.setLength((int) r[i + 1]);
                sge.setLkey((int) r[i + 2]);
                sges.add(sge);
            }
            wr.setSg_list(sges);
            wr.setNum_sge(sges.size());
            List<IbvRecvWR> list = new ArrayList<>(1);
            list.add(wr);
            cached = new CachedRecv(r, qp.postRecv(list, null));
            recvCalls[slot] = cached;
        }
        cached.call.execute();
    }

    // ------------------------------------------------------------------ teardown

    private synchronized void teardownHardware() {
        for (SVCPostSend[] row : sendCalls) {
            for (int i = 0; i < row.length; i++) {
                if (row[i] != null) {
                    row[i].free();
                    row[i] = null;
                }
            }
        }
        for (int i = 0; i < recvCalls.length; i++) {
            if (recvCalls[i] != null) {
                recvCalls[i].call.free();
                recvCalls[i] = null;
            }
        }
        if (cmId != null) {
            device.disown(cmId);
            try {
                if (qp != null) {
                    cmId.destroyQP();
                }
            } catch (IOException | RuntimeException e) {
                LOG.debug("rdma_destroy_qp failed", e);
            }
            DisniDevice.destroyQuietly(cmId);
        }
        qp = null;
        cmId = null;
        hardwareQpn = -1;
    }

    @Override
    public void close() {
        synchronized (this) {
            if (state == QpState.CLOSED) {
                return;
            }
            state = QpState.CLOSED;
        }
        device.stopWaiting(this);
        RdmaCmId id = cmId;
        if (id != null && remoteEndpoint != null) {
            try {
                id.disconnect(); // moves the QP to ERR: the peer sees DISCONNECTED, outstanding work is flushed
            } catch (IOException | RuntimeException e) {
                LOG.debug("rdma_disconnect failed", e);
            }
        }
        teardownHardware();
    }

    @Override
    public String toString() {
        return "disni QP " + qpn + " (hardware " + hardwareQpn + ") " + localEndpoint + " -> " + remoteEndpoint + " " + state;
    }

    private static final class CachedRecv {
        final long[] key;
        final SVCPostRecv call;

        CachedRecv(long[] key, SVCPostRecv call) {
            this.key = key;
            this.call = call;
        }

        boolean matches(long wrId, ScatterGatherList sgl) {
            if (key[0] != wrId || key.length != 1 + 3 * sgl.count()) {
                return false;
            }
            for (int i = 0; i < sgl.count(); i++) {
                if (key[1 + 3 * i] != sgl.region(i).address() + sgl.offset(i) || key[2 + 3 * i] != sgl.length(i)
                        || key[3 + 3 * i] != sgl.region(i).lkey()) {
                    return false;
                }
            }
            return true;
        }
    }
}
