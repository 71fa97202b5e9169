package io.netreduce.testkit.inproc;

import io.netreduce.verbs.Counter;
import io.netreduce.verbs.Counters;
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
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayDeque;

/** An inproc RC queue pair: delivery happens in the sender's thread, under the receiver's lock. */
final class InprocQueuePair implements QueuePair {
    /** A message waiting for (or being matched with) a receive: a gather list, or bytes from a switch. */
    record Incoming(InprocQueuePair sender, long wrId, ScatterGatherList gather, ByteBuffer data) {
        int length() {
            return gather != null ? (int) gather.totalLength() : data.remaining();
        }
    }

    private final InprocDevice device;
    private final int qpn;
    private final QpAttributes attributes;
    private final Counters counters = new Counters();
    private final ArrayDeque<RecvRequest> posted = new ArrayDeque<>();
    private final ArrayDeque<Incoming> waiting = new ArrayDeque<>();
    private volatile QpState state = QpState.INIT;
    private volatile QpEndpoint remote;
    private volatile InprocQueuePair peer;

    InprocQueuePair(InprocDevice device, int qpn, QpAttributes attributes) {
        this.device = device;
        this.qpn = qpn;
        this.attributes = attributes;
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
        return new QpEndpoint(device.address.getAddress(), device.address.getPort(), qpn, 0);
    }

    @Override
    public QpEndpoint remoteEndpoint() {
        return remote;
    }

    InprocQueuePair peer() {
        return peer;
    }

    InprocDevice device() {
        return device;
    }

    @Override
    public void connect(QpEndpoint endpoint, Duration timeout) {
        InprocDevice other = InprocProvider.device(new InetSocketAddress(endpoint.address(), endpoint.port()));
        InprocQueuePair p = other == null ? null : other.queuePairs.get(endpoint.qpn());
        if (p == null) {
            throw new VerbsException("inproc: no queue pair at " + endpoint);
        }
        remote = endpoint;
        peer = p;
        state = QpState.READY;
    }

    @Override
    public void postSend(SendRequest request) {
        if (state != QpState.READY) {
            throw new VerbsException("inproc QP " + qpn + " cannot send in state " + state);
        }
        ScatterGatherList copy = new ScatterGatherList(Math.max(1, request.sgl().count()));
        copy.copyFrom(request.sgl());
        counters.increment(Counter.MESSAGES_SENT);
        InetSocketAddress gateway = device.options().gateway();
        if (gateway != null) {
            InprocSwitch sw = InprocSwitch.at(gateway);
            if (sw == null) {
                fail(request.wrId(), "inproc: no switch at gateway " + gateway);
                return;
            }
            sw.accept(this, request.wrId(), copy);
            return;
        }
        peer.arrive(new Incoming(this, request.wrId(), copy, null));
    }

    /** Called by a sender (or a switch): deliver now if a receive is posted, else queue. */
    void arrive(Incoming in) {
        synchronized (this) {
            if (state == QpState.CLOSED || state == QpState.ERROR) {
                in.sender.fail(in.wrId, "inproc: peer QP " + qpn + " is " + state);
                return;
            }
            if (!waiting.isEmpty() || posted.isEmpty()) {
                waiting.add(in);
                return;
            }
            deliver(in, posted.poll());
        }
    }

    @Override
    public void postRecv(RecvRequest request) {
        RecvRequest copy = new RecvRequest(Math.max(1, request.sgl().count()));
        copy.wrId(request.wrId());
        copy.sgl().copyFrom(request.sgl());
        synchronized (this) {
            if (state == QpState.CLOSED || state == QpState.ERROR) {
                throw new VerbsException("inproc QP " + qpn + " cannot receive in state " + state);
            }
            if (!waiting.isEmpty()) {
                deliver(waiting.poll(), copy);
            } else {
                posted.add(copy);
            }
        }
    }

    private void deliver(Incoming in, RecvRequest recv) {
        int length = in.length();
        if (length > recv.sgl().totalLength()) {
            completeRecv(recv.wrId(), WcStatus.LOC_LEN_ERR, length, length + " bytes arrived for a "
                    + recv.sgl().totalLength() + "-byte receive");
            in.sender.fail(in.wrId, "remote receive too short");
            return;
        }
        copy(in, recv.sgl(), length);
        counters.increment(Counter.MESSAGES_RECEIVED);
        completeRecv(recv.wrId(), WcStatus.SUCCESS, length, null);
        in.sender.complete(in.wrId, WcStatus.SUCCESS, length, null);
    }

    /** Scatters the incoming bytes over the receive list, skipping spans that are already in place. */
    private static void copy(Incoming in, ScatterGatherList dst, int length) {
        int si = 0;
        int so = 0;
        int di = 0;
        int dOff = 0;
        int left = length;
        while (left > 0) {
            int sLen = in.gather != null ? in.gather.length(si) : in.data.remaining();
            int dLen = dst.length(di);
            if (so == sLen) {
                si++;
                so = 0;
                continue;
            }
            if (dOff == dLen) {
                di++;
                dOff = 0;
                continue;
            }
            int n = Math.min(Math.min(sLen - so, dLen - dOff), left);
            InprocMemoryRegion to = (InprocMemoryRegion) dst.region(di);
            int toIndex = dst.offset(di) + dOff;
            if (in.gather != null) {
                InprocMemoryRegion from = (InprocMemoryRegion) in.gather.region(si);
                int fromIndex = in.gather.offset(si) + so;
                if (from.registered != to.registered || fromIndex != toIndex) {
                    to.view().put(toIndex, from.view(), fromIndex, n);
                }
            } else {
                to.view().put(toIndex, in.data, in.data.position() + so, n);
            }
            so += n;
            dOff += n;
            left -= n;
        }
    }

    private void completeRecv(long wrId, WcStatus status, int bytes, String detail) {
        add((InprocCompletionQueue) attributes.recvCq(), wrId, status, WcOpcode.RECV, bytes, detail);
    }

    void complete(long wrId, WcStatus status, int bytes, String detail) {
        add((InprocCompletionQueue) attributes.sendCq(), wrId, status, WcOpcode.SEND, bytes, detail);
    }

    /** Fails one send as a transport would after its retries: the queue pair goes to ERROR. */
    void fail(long wrId, String why) {
        state = state == QpState.CLOSED ? QpState.CLOSED : QpState.ERROR;
        complete(wrId, WcStatus.RETRY_EXC_ERR, 0, why);
    }

    private void add(InprocCompletionQueue cq, long wrId, WcStatus status, WcOpcode op, int bytes, String detail) {
        if (!cq.add(wrId, status, op, bytes, qpn, detail)) {
            state = QpState.ERROR;
        }
    }


    @Override
    public int mtu() {
        return attributes.mtu();
    }

    @Override
    public Counters counters() {
        return counters;
    }

    @Override
    public void close() {
        ArrayDeque<Incoming> orphans;
        synchronized (this) {
            if (state == QpState.CLOSED) {
                return;
            }
            state = QpState.CLOSED;
            orphans = new ArrayDeque<>(waiting);
            waiting.clear();
            posted.clear();
        }
        device.queuePairs.remove(qpn);
        for (Incoming in : orphans) {
            in.sender.fail(in.wrId, "inproc: peer QP " + qpn + " closed");
        }
    }
}
