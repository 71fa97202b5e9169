package io.netreduce.wire.roce;

import java.nio.ByteBuffer;

/**
 * Flyweight over a Base Transport Header (12 bytes, big-endian) at some offset of a
 * {@link ByteBuffer}. Absolute accessors only: wrapping moves no position and allocates
 * nothing, so one instance can walk millions of packets.
 */
public final class Bth {
    public static final int LENGTH = 12;

    public static final int OPCODE_OFFSET = 0;
    /** SE(1) M(1) PadCnt(2) TVer(4). */
    public static final int FLAGS_OFFSET = 1;
    public static final int PKEY_OFFSET = 2;
    /** FECN(1) BECN(1) Resv6a(6): the byte the ICRC masks. */
    public static final int ECN_OFFSET = 4;
    public static final int DEST_QP_OFFSET = 4;
    public static final int PSN_OFFSET = 8;

    public static final int SE_MASK = 0x80;
    public static final int MIG_REQ_MASK = 0x40;
    public static final int PAD_MASK = 0x30;
    public static final int PAD_SHIFT = 4;
    public static final int TVER_MASK = 0x0F;
    public static final int FECN_MASK = 0x80000000;
    public static final int BECN_MASK = 0x40000000;
    public static final int ACK_REQ_MASK = 0x80000000;
    public static final int DEFAULT_PKEY = 0xFFFF;

    private ByteBuffer buffer;
    private int offset;

    public Bth wrap(ByteBuffer buffer, int offset) {
        this.buffer = buffer;
        this.offset = offset;
        return this;
    }

    public ByteBuffer buffer() {
        return buffer;
    }

    public int offset() {
        return offset;
    }

    public int opcode() {
        return buffer.get(offset + OPCODE_OFFSET) & 0xFF;
    }

    public Bth opcode(int op) {
        buffer.put(offset + OPCODE_OFFSET, (byte) op);
        return this;
    }

    public boolean solicitedEvent() {
        return (buffer.get(offset + FLAGS_OFFSET) & SE_MASK) != 0;
    }

    public boolean migReq() {
        return (buffer.get(offset + FLAGS_OFFSET) & MIG_REQ_MASK) != 0;
    }

    public int padCount() {
        return (buffer.get(offset + FLAGS_OFFSET) & PAD_MASK) >>> PAD_SHIFT;
    }

    public int transportVersion() {
        return buffer.get(offset + FLAGS_OFFSET) & TVER_MASK;
    }

    /** Writes SE, M, PadCnt and TVer = 0 in one go. */
    public Bth flags(boolean solicited, boolean migReq, int padCount) {
        int v = (solicited ? SE_MASK : 0) | (migReq ? MIG_REQ_MASK : 0) | ((padCount << PAD_SHIFT) & PAD_MASK);
        buffer.put(offset + FLAGS_OFFSET, (byte) v);
        return this;
    }

    public Bth padCount(int pad) {
        int b = buffer.get(offset + FLAGS_OFFSET) & ~PAD_MASK;
        buffer.put(offset + FLAGS_OFFSET, (byte) (b | ((pad << PAD_SHIFT) & PAD_MASK)));
        return this;
    }

    public int pkey() {
        return buffer.getShort(offset + PKEY_OFFSET) & 0xFFFF;
    }

    public Bth pkey(int pkey) {
        buffer.putShort(offset + PKEY_OFFSET, (short) pkey);
        return this;
    }

    public boolean fecn() {
        return (buffer.getInt(offset + DEST_QP_OFFSET) & FECN_MASK) != 0;
    }

    public boolean becn() {
        return (buffer.getInt(offset + DEST_QP_OFFSET) & BECN_MASK) != 0;
    }

    public int destQp() {
        return buffer.getInt(offset + DEST_QP_OFFSET) & Psn.MASK;
    }

    /** Writes DestQP and clears FECN/BECN/Resv6a. */
    public Bth destQp(int qpn) {
        buffer.putInt(offset + DEST_QP_OFFSET, qpn & Psn.MASK);
        return this;
    }

    public boolean ackRequest() {
        return (buffer.getInt(offset + PSN_OFFSET) & ACK_REQ_MASK) != 0;
    }

    public int psn() {
        return buffer.getInt(offset + PSN_OFFSET) & Psn.MASK;
    }

    /** Writes AckReq and PSN (Resv7 = 0). */
    public Bth psn(int psn, boolean ackRequest) {
        buffer.putInt(offset + PSN_OFFSET, (psn & Psn.MASK) | (ackRequest ? ACK_REQ_MASK : 0));
        return this;
    }

    public Bth ackRequest(boolean a) {
        int w = buffer.getInt(offset + PSN_OFFSET);
        buffer.putInt(offset + PSN_OFFSET, a ? (w | ACK_REQ_MASK) : (w & ~ACK_REQ_MASK));
        return this;
    }

    /** Writes a whole BTH: opcode, flags (TVer 0, M 0), default P_Key, DestQP, AckReq, PSN. */
    public Bth set(int opcode, boolean solicited, int padCount, int destQp, boolean ackRequest, int psn) {
        opcode(opcode);
        flags(solicited, false, padCount);
        pkey(DEFAULT_PKEY);
        destQp(destQp);
        psn(psn, ackRequest);
        return this;
    }

    @Override
    public String toString() {
        return Opcode.name(opcode()) + " qp=0x" + Integer.toHexString(destQp()) + " psn=" + psn()
                + (ackRequest() ? " A" : "") + " pad=" + padCount();
    }
}
