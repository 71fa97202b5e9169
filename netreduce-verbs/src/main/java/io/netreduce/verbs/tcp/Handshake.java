package io.netreduce.verbs.tcp;

import java.nio.ByteBuffer;

/**
 * Flyweight over the 24-byte message that opens a queue pair's TCP connection. The side
 * that dials sends HELLO naming both queue-pair numbers; the accepting device answers
 * ACCEPT, or REJECT with a reason code. Big-endian.
 *
 * <pre>
 *  0 u32 magic     'NRTC'
 *  4 u16 version
 *  6 u16 kind      HELLO, ACCEPT or REJECT
 *  8 u32 sourceQpn the sender's queue pair
 * 12 u32 targetQpn the queue pair addressed on the receiving device
 * 16 u32 reason    REJECT: one of the REASON_* codes
 * 20 u32 reserved
 * </pre>
 */
final class Handshake {
    static final int LENGTH = 24;
    static final int MAGIC = 0x4E525443; // "NRTC"
    static final short VERSION = 1;

    static final int MAGIC_OFFSET = 0;
    static final int VERSION_OFFSET = 4;
    static final int KIND_OFFSET = 6;
    static final int SOURCE_QPN_OFFSET = 8;
    static final int TARGET_QPN_OFFSET = 12;
    static final int REASON_OFFSET = 16;

    static final short KIND_HELLO = 1;
    static final short KIND_ACCEPT = 2;
    static final short KIND_REJECT = 3;

    static final int REASON_NONE = 0;
    static final int REASON_UNKNOWN_QP = 1;
    static final int REASON_NOT_CONNECTABLE = 2;
    static final int REASON_WRONG_PEER = 3;

    private Handshake() {
    }

    static ByteBuffer encode(short kind, int sourceQpn, int targetQpn, int reason) {
        ByteBuffer b = ByteBuffer.allocate(LENGTH);
        b.putInt(MAGIC_OFFSET, MAGIC);
        b.putShort(VERSION_OFFSET, VERSION);
        b.putShort(KIND_OFFSET, kind);
        b.putInt(SOURCE_QPN_OFFSET, sourceQpn);
        b.putInt(TARGET_QPN_OFFSET, targetQpn);
        b.putInt(REASON_OFFSET, reason);
        return b;
    }

    /** Null if {@code b} holds a well-formed handshake of this version, otherwise what is wrong. */
    static String validate(ByteBuffer b) {
        if (b.getInt(MAGIC_OFFSET) != MAGIC) {
            return "bad magic 0x" + Integer.toHexString(b.getInt(MAGIC_OFFSET)) + " (not a netreduce TCP verbs peer)";
        }
        if (b.getShort(VERSION_OFFSET) != VERSION) {
            return "unsupported handshake version " + b.getShort(VERSION_OFFSET);
        }
        return null;
    }

    static short kind(ByteBuffer b) { return b.getShort(KIND_OFFSET); }
    static int sourceQpn(ByteBuffer b) { return b.getInt(SOURCE_QPN_OFFSET); }
    static int targetQpn(ByteBuffer b) { return b.getInt(TARGET_QPN_OFFSET); }
    static int reason(ByteBuffer b) { return b.getInt(REASON_OFFSET); }

    static String reasonText(int reason) {
        switch (reason) {
            case REASON_UNKNOWN_QP: return "no such queue pair on the peer device";
            case REASON_NOT_CONNECTABLE: return "the peer queue pair is already connected, in error or closed";
            case REASON_WRONG_PEER: return "the peer queue pair is connecting to a different endpoint";
            default: return "reason " + reason;
        }
    }
}
