package io.netreduce.verbs.soft;

import io.netreduce.verbs.Access;
import io.netreduce.verbs.Counter;
import io.netreduce.verbs.Counters;
import io.netreduce.verbs.ScatterGatherList;
import io.netreduce.verbs.WcOpcode;
import io.netreduce.verbs.WcStatus;
import io.netreduce.wire.roce.Aeth;
import io.netreduce.wire.roce.Bth;
import io.netreduce.wire.roce.Icrc;
import io.netreduce.wire.roce.Opcode;
import io.netreduce.wire.roce.Psn;
import io.netreduce.wire.roce.Reth;
import io.netreduce.wire.roce.RoceFrame;
import java.nio.ByteBuffer;

/**
 * The receive side of a queue pair (rxe's responder, the kernel's rxe_resp.c): checks each
 * request's PSN against the expected one, executes in-order SENDs and WRITEs exactly once
 * (copying the payload into the posted receive buffers or the target region: the one copy
 * a NIC's DMA would make), re-ACKs duplicates without re-executing them, answers the first
 * packet past a gap with one sequence NAK, and answers a SEND with no receive posted with
 * an RNR NAK. ACKs are coalesced: whatever a burst of received packets asks for is answered
 * by one cumulative ACK at the end of the burst. Confined to whoever runs the device's protocol.
 */
final class Responder {
    private final SoftQueuePair qp;
    private final WorkRing<RecvWqe> ring;
    private final Counters counters;
    private final int mtu;
    private final int rnrTimerCode;
    private final Bth bth = new Bth();
    private final Aeth aeth = new Aeth();

    private Egress egress;
    private int remoteQpn;
    private SoftDevice device;

    /** Expected PSN of the next new request. */
    private int expectedPsn;
    private int msn;
    /** A sequence or RNR NAK is outstanding: later out-of-order packets are dropped silently. */
    private boolean nakOutstanding;
    private boolean ackPending;
    /** Receive WQEs consumed so far (ring index). */
    private long consumed;

    // The message in progress (after a First, before its Last).
    private int lastOpcode = -1;
    private boolean inMessage;
    private RecvWqe recv;
    private int received;
    private SoftMemoryRegion writeRegion;
    private int writeOffset;
    private int writeRemaining;
    private int writeTotal;

    Responder(SoftQueuePair qp, WorkRing<RecvWqe> ring, int mtu, long minRnrMicros, Counters counters) {
        this.qp = qp;
        this.ring = ring;
        this.mtu = mtu;
        this.counters = counters;
        this.rnrTimerCode = Aeth.rnrTimerCode(minRnrMicros);
    }

    void connect(Egress egress, SoftDevice device, int remoteQpn, int remoteInitialPsn) {
        this.egress = egress;
        this.device = device;
        this.remoteQpn = remoteQpn;
        this.expectedPsn = remoteInitialPsn;
    }

    void onRequest(RoceFrame frame) {
        int psn = frame.bth().psn();
        int d = Psn.compare(psn, expectedPsn);
        if (d > 0) {
            counters.increment(Counter.DROP_OUT_OF_SEQUENCE);
            if (!nakOutstanding) {
                nakOutstanding = true;
                counters.increment(Counter.NAKS_SENT);
                sendAck(Aeth.SYNDROME_NAK_PSN_SEQUENCE_ERROR, expectedPsn);
                qp.markDirty();
            }
            return;
        }
        if (d < 0) {
            counters.increment(Counter.DUPLICATES_RECEIVED);
            ackPending = true;
            qp.markDirty();
            return;
        }
        int op = frame.opcode();
        if (!Opcode.isSend(op) && !Opcode.isWrite(op)) {
            fatal(Aeth.SYNDROME_NAK_INVALID_REQUEST, psn, Opcode.name(op) + " at PSN " + psn
                    + " is not supported by this responder (SEND and RDMA WRITE only)");
            return;
        }
        if (!checkSequence(op, psn)) {
            return;
        }
        if (!checkLength(op, frame.payloadLength(), psn)) {
            return;
        }
        boolean send = Opcode.isSend(op);
        boolean end = Opcode.isEnd(op);
        boolean consumesRecv = send || Opcode.hasImmediate(op);
        if (consumesRecv && (send ? Opcode.isStart(op) : end)) {
            if (consumed == ring.posted()) {
                nakOutstanding = true;
                counters.increment(Counter.RNR_NAKS_SENT);
                sendAck(Aeth.rnrNak(rnrTimerCode), psn);
                qp.markDirty();
                return;
            }
            if (send) {
                recv = ring.at(consumed);
                received = 0;
            }
        }
        if (send) {
            if (!scatter(frame, psn)) {
                return;
            }
        } else {
            if (Opcode.isStart(op) && !startWrite(frame.reth(), psn)) {
                return;
            }
            if (!write(frame, psn)) {
                return;
            }
        }
        nakOutstanding = false;
        expectedPsn = Psn.next(psn);
        lastOpcode = op;
        inMessage = !end;
        counters.increment(Counter.PACKETS_RECEIVED);
        counters.add(Counter.BYTES_RECEIVED, frame.length());
        if (end) {
            msn = Psn.next(msn);
            counters.increment(Counter.MESSAGES_RECEIVED);
            boolean imm = Opcode.hasImmediate(op);
            int immediate = imm ? frame.immDt().value() : 0;
            if (send) {
                RecvWqe r = recv;
                recv = null;
                retireRecv();
                qp.completeRecv(r.wrId, WcStatus.SUCCESS, WcOpcode.RECV, received, imm, immediate, "");
            } else if (imm) {
                RecvWqe r = ring.at(consumed);
                retireRecv();
                qp.completeRecv(r.wrId, WcStatus.SUCCESS, WcOpcode.RECV_RDMA_WITH_IMM, writeTotal, true, immediate, "");
            }
            writeRegion = null;
        }
        if (frame.bth().ackRequest()) {
            ackPending = true;
            qp.markDirty();
        }
    }

    private void retireRecv() {
        consumed++;
        ring.retire(consumed);
    }

    private boolean checkSequence(int op, int psn) {
        boolean ok;
        if (inMessage) {
            ok = !Opcode.isStart(op) && Opcode.isSend(op) == Opcode.isSend(lastOpcode);
        } else {
            ok = Opcode.isStart(op);
        }
        if (!ok) {
            fatal(Aeth.SYNDROME_NAK_INVALID_REQUEST, psn, String.format(
                    "%s at PSN %d after %s breaks the opcode sequence", Opcode.name(op), psn,
                    lastOpcode < 0 ? "no message" : Opcode.name(lastOpcode)));
        }
        return ok;
    }

    private boolean checkLength(int op, int payload, int psn) {
        boolean start = Opcode.isStart(op);
        boolean end = Opcode.isEnd(op);
        boolean ok;
        if (start && end) {
            ok = payload <= mtu;
        } else if (end) {
            ok = payload >= 1 && payload <= mtu;
        } else {
            ok = payload == mtu;
        }
        if (!ok) {
            fatal(Aeth.SYNDROME_NAK_INVALID_REQUEST, psn, String.format(
                    "%s at PSN %d carries %d payload bytes, path MTU is %d", Opcode.name(op), psn, payload, mtu));
        }
        return ok;
    }

    /** Copies a SEND packet's payload into the receive WQE at the message offset. */
    private boolean scatter(RoceFrame frame, int psn) {
        int length = frame.payloadLength();
        if (received + (long) length > recv.capacity) {
            long wrId = recv.wrId;
            long capacity = recv.capacity;
            recv = null;
            retireRecv();
            qp.completeRecv(wrId, WcStatus.LOC_LEN_ERR, WcOpcode.RECV, received + length, false, 0,
                    "message is longer than the receive request's " + capacity + " bytes");
            fatal(Aeth.SYNDROME_NAK_INVALID_REQUEST, psn, "SEND at PSN " + psn
                    + " does not fit the posted receive request " + wrId);
            return false;
        }
        ByteBuffer src = frame.buffer();
        int srcAt = frame.payloadOffset();
        ScatterGatherList sgl = recv.sgl;
        int skip = received;
        int left = length;
        for (int i = 0; i < sgl.count() && left > 0; i++) {
            int l = sgl.length(i);
            if (skip >= l) {
                skip -= l;
                continue;
            }
            int n = Math.min(l - skip, left);
            SoftMemoryRegion mr = (SoftMemoryRegion) sgl.region(i);
            mr.memory.put(sgl.offset(i) + skip, src, srcAt, n);
            srcAt += n;
            left -= n;
            skip = 0;
        }
        received += length;
        return true;
    }

    private boolean startWrite(Reth r, int psn) {
        int rkey = r.rkey();
        long va = r.virtualAddress();
        int len = r.dmaLength();
        SoftMemoryRegion mr = device.regionByRkey(rkey);
        String problem = null;
        if (mr == null || mr.isClosed()) {
            problem = "no memory region with rkey 0x" + Integer.toHexString(rkey);
        } else if (mr.pd() != qp.pd()) {
            problem = "rkey 0x" + Integer.toHexString(rkey) + " belongs to another protection domain";
        } else if (!mr.allows(Access.REMOTE_WRITE)) {
            problem = "memory region with rkey 0x" + Integer.toHexString(rkey) + " does not allow REMOTE_WRITE";
        } else if (len < 0 || va < mr.address() || va + len > mr.address() + mr.length()) {
            problem = String.format("RDMA WRITE [0x%x, +%d) lies outside region [0x%x, +%d)", va, len, mr.address(),
                    mr.length());
        }
        if (problem != null) {
            fatal(Aeth.SYNDROME_NAK_REMOTE_ACCESS_ERROR, psn, problem + " (PSN " + psn + ")");
            return false;
        }
        writeRegion = mr;
        writeOffset = (int) (va - mr.address());
        writeRemaining = len;
        writeTotal = len;
        return true;
    }

    private boolean write(RoceFrame frame, int psn) {
        int n = frame.payloadLength();
        if (n > writeRemaining || (Opcode.isEnd(frame.opcode()) && n != writeRemaining)) {
            fatal(Aeth.SYNDROME_NAK_INVALID_REQUEST, psn, "RDMA WRITE packets at PSN " + psn
                    + " do not add up to the DMA length " + writeTotal);
            return false;
        }
        if (n > 0) {
            writeRegion.memory.put(writeOffset, frame.buffer(), frame.payloadOffset(), n);
        }
        writeOffset += n;
        writeRemaining -= n;
        return true;
    }

    /** Class C error: NAK the requester and move this queue pair to error. */
    private void fatal(int syndrome, int psn, String reason) {
        // Queue the NAK but enter ERROR before it leaves: once the requester sees its error
        // completion, this side must already be in ERROR too (as on a NIC, where both happen
        // before the NAK is on the wire).
        sendAck(syndrome, psn);
        qp.fail(WcStatus.GENERAL_ERR, "responder: " + reason, -1);
        egress.flush();
    }

    /** End of a burst: one cumulative ACK covers every request that asked for one. */
    void flushAck() {
        if (ackPending) {
            ackPending = false;
            counters.increment(Counter.ACKS_SENT);
            sendAck(Aeth.SYNDROME_ACK, Psn.add(expectedPsn, -1));
        }
    }

    private void sendAck(int syndrome, int psn) {
        int at = egress.begin(Bth.LENGTH + Aeth.LENGTH + Icrc.LENGTH);
        ByteBuffer b = egress.buffer();
        bth.wrap(b, at).set(Opcode.ACKNOWLEDGE, false, 0, remoteQpn, false, psn);
        aeth.wrap(b, at + Bth.LENGTH).set(syndrome, msn);
        egress.commit();
    }

    /** Receive WQEs consumed so far; the caller flushes the rest when the QP fails. */
    long consumed() {
        return consumed;
    }

    /** The receive WQE a SEND is filling, if any (flushed on error). */
    boolean hasPartialRecv() {
        return recv != null;
    }

    void retireAll(long index) {
        recv = null;
        consumed = index;
        ring.retire(index);
    }
}
