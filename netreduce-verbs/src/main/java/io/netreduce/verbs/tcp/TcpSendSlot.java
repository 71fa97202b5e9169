package io.netreduce.verbs.tcp;

import io.netreduce.verbs.ScatterGatherList;
import io.netreduce.verbs.SendOpcode;
import io.netreduce.verbs.SendRequest;
import java.nio.ByteBuffer;

/**
 * One send-queue entry: a copy of the posted request plus the header buffer and the
 * gathering-write vector used to transmit it. Views of the memory regions are cached per
 * SGE position and only replaced when a post names a different region, so steady-state
 * posting allocates nothing.
 */
final class TcpSendSlot {
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
    /** Which of the responder's receives this request consumes (counted from 0), or -1: an RDMA WRITE consumes none. */
    long receiveIndex;
    /** Payload bytes of the requests that consume a receive, up to and including this one. */
    long receiveBytesThrough;
    /** Sent under a receive credit: completes once written, with no ACK (see {@link FrameHeader}). */
    boolean completesOnWrite;
    /** A {@link #completesOnWrite} request is written in full and completes once those before it have. */
    boolean written;

    TcpSendSlot(int maxSge) {
        sgl = new ScatterGatherList(maxSge);
        iov = new ByteBuffer[1 + maxSge];
        ends = new int[1 + maxSge];
        viewRegions = new TcpMemoryRegion[maxSge];
        iov[0] = headerBuffer;
    }

    void fill(SendRequest r, int total, long receiveIndex, long receiveBytesThrough) {
        this.receiveIndex = receiveIndex;
        this.receiveBytesThrough = receiveBytesThrough;
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

    /** Whether this request is a plain SEND, which a receive credit can cover. */
    boolean isSend() {
        return opcode == SendOpcode.SEND || opcode == SendOpcode.SEND_WITH_IMM;
    }

    /**
     * Fills the header and points the vector at the payload; returns the vector length.
     * {@code underCredit}: the frame asks for no ACK and the request completes once written.
     * Only by the thread holding the socket.
     */
    int prepare(int sequence, boolean underCredit) {
        completesOnWrite = underCredit;
        written = false;
        byte type;
        switch (opcode) {
            case SEND: type = FrameHeader.TYPE_SEND; break;
            case SEND_WITH_IMM: type = FrameHeader.TYPE_SEND_IMM; break;
            case RDMA_WRITE: type = FrameHeader.TYPE_WRITE; break;
            default: type = FrameHeader.TYPE_WRITE_IMM; break;
        }
        header.set(type, (byte) 0, sequence, length, immediate, remoteAddress, rkey, 0)
                .flags(underCredit ? FrameHeader.FLAG_NO_ACK : 0);
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
