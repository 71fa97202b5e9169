package io.netreduce.verbs.disni;

import com.ibm.disni.verbs.IbvCQ;
import com.ibm.disni.verbs.IbvCompChannel;
import com.ibm.disni.verbs.IbvContext;
import com.ibm.disni.verbs.IbvWC;
import com.ibm.disni.verbs.SVCPollCq;
import com.ibm.disni.verbs.SVCReqNotify;
import io.netreduce.verbs.CompletionQueue;
import io.netreduce.verbs.VerbsException;
import io.netreduce.verbs.WcOpcode;
import io.netreduce.verbs.WcStatus;
import io.netreduce.verbs.WorkCompletion;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An {@code ibv_cq} with its completion channel, polled by the caller's thread: one
 * {@link SVCPollCq} and one {@link SVCReqNotify} are built once and re-executed, and every
 * work completion's status is checked and translated (DiSNI reports errors only there).
 * DiSNI's own CQ-processing thread is not used: it swallows exceptions.
 */
final class DisniCompletionQueue implements CompletionQueue {
    private static final Logger LOG = LoggerFactory.getLogger(DisniCompletionQueue.class);
    private static final int BATCH = 32;

    private final DisniDevice device;
    private final int capacity;
    private final IbvCompChannel channel;
    private final IbvCQ cq;
    private final IbvWC[] wcs = new IbvWC[BATCH];
    private final SVCPollCq pollCall;
    private final SVCReqNotify notifyCall;
    private int pending;
    private int next;
    private volatile DisniQueuePair[] queuePairs = new DisniQueuePair[0];
    private volatile boolean usedForSends;
    private volatile boolean usedForRecvs;
    private volatile boolean open = true;

    DisniCompletionQueue(DisniDevice device, IbvContext context, int capacity) {
        if (capacity < 1) {
            throw new VerbsException("completion queue capacity must be positive: " + capacity);
        }
        this.device = device;
        this.capacity = capacity;
        try {
            channel = context.createCompChannel();
            cq = context.createCQ(channel, capacity, 0);
            for (int i = 0; i < BATCH; i++) {
                wcs[i] = new IbvWC();
            }
            pollCall = cq.poll(wcs, BATCH);
            notifyCall = cq.reqNotification(false);
        } catch (IOException e) {
            throw new VerbsException("ibv_create_cq of " + capacity + " entries failed on " + device + ": " + e.getMessage(), e);
        }
    }

    IbvCQ ibvCq() {
        return cq;
    }

    synchronized void attach(DisniQueuePair qp, boolean sends, boolean recvs) {
        DisniQueuePair[] a = java.util.Arrays.copyOf(queuePairs, queuePairs.length + 1);
        a[a.length - 1] = qp;
        queuePairs = a;
        usedForSends |= sends;
        usedForRecvs |= recvs;
    }

    @Override
    public synchronized int poll(WorkCompletion[] out) {
        if (!open) {
            return 0;
        }
        int n = 0;
        while (n < out.length) {
            if (next == pending) {
                try {
                    pollCall.execute();
                } catch (IOException e) {
                    throw new VerbsException("ibv_poll_cq failed on " + device + ": " + e.getMessage(), e);
                }
                int polled = pollCall.getPolls();
                if (polled < 0) {
                    throw new VerbsException("ibv_poll_cq returned " + polled + " on " + device);
                }
                pending = polled;
                next = 0;
                if (polled == 0) {
                    break;
                }
            }
            translate(wcs[next++], out[n++]);
        }
        return n;
    }

    @Override
    public int poll(WorkCompletion[] out, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + Math.max(0, timeout.toNanos());
        while (true) {
            int n = poll(out);
            if (n > 0) {
                return n;
            }
            long remainingMs = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
            if (remainingMs <= 0 || !open) {
                return 0;
            }
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
            try {
                // Arm, then poll again: a completion that arrived before arming raises no event.
                synchronized (this) {
                    notifyCall.execute();
                }
                n = poll(out);
                if (n > 0) {
                    return n;
                }
                if (channel.getCqEvent(cq, (int) Math.min(remainingMs, 100))) {
                    cq.ackEvents(1);
                }
            } catch (IOException e) {
                throw new VerbsException("waiting for completions failed on " + device + ": " + e.getMessage(), e);
            }
        }
    }

    private void translate(IbvWC wc, WorkCompletion out) {
        int ibvStatus = wc.getStatus();
        WcStatus status = DisniMapping.status(ibvStatus);
        DisniQueuePair qp = byHardwareQpn(wc.getQp_num());
        int qpn = qp != null ? qp.qpn() : wc.getQp_num();
        WcOpcode opcode;
        String detail = null;
        if (status.isSuccess()) {
            opcode = DisniMapping.opcode(wc.getOpcode());
            if (opcode == null) {
                opcode = WcOpcode.SEND;
                detail = "unexpected ibv_wc_opcode " + wc.getOpcode();
            }
        } else {
            // ibverbs leaves the opcode undefined in error completions; infer it from the queue's use.
            opcode = usedForRecvs && !usedForSends ? WcOpcode.RECV : WcOpcode.SEND;
            detail = DisniMapping.statusName(ibvStatus) + " (vendor error 0x" + Integer.toHexString(wc.getVendor_err())
                    + ") on QP " + qpn + (qp != null ? " to " + qp.remoteEndpoint() : "");
            if (qp != null) {
                qp.onErrorCompletion(detail);
            }
        }
        boolean imm = (wc.getWc_flags() & DisniMapping.WC_WITH_IMM) != 0;
        out.set(wc.getWr_id(), status, opcode, wc.getByte_len(), imm, imm ? wc.getImm_data() : 0, qpn, detail);
        if (qp != null && status.isSuccess()) {
            qp.onSuccessCompletion(opcode, wc.getByte_len());
        }
    }

    private DisniQueuePair byHardwareQpn(int hwQpn) {
        for (DisniQueuePair qp : queuePairs) {
            if (qp.hardwareQpn() == hwQpn) {
                return qp;
            }
        }
        return null;
    }

    @Override
    public int capacity() {
        return capacity;
    }

    @Override
    public synchronized void close() {
        if (!open) {
            return;
        }
        open = false;
        try {
            pollCall.free();
            notifyCall.free();
            cq.destroyCQ();
            channel.destroyCompChannel();
        } catch (IOException e) {
            LOG.warn("destroying completion queue on {} failed", device, e);
        }
    }
}
