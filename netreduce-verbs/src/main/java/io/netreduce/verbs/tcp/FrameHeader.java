package io.netreduce.verbs.tcp;

import java.nio.ByteBuffer;

/**
 * Flyweight over the fixed 32-byte header that starts every frame on a TCP queue pair's
 * connection. Big-endian. Request frames (SEND, WRITE and their immediate variants) are
 * followed by {@link #length()} payload bytes; ACK and NAK frames carry none.
 *
 * <pre>
 *  0  u8  type          one of the TYPE_* constants
 *  1  u8  status        NAK reason (STATUS_*), 0 otherwise
 *  2  u16 flags         FLAG_* bits
 *  4  u32 sequence      request: its message sequence number; ACK/NAK: the one answered
 *  8  u32 length        payload bytes that follow
 * 12  u32 immediate     immediate data of *_IMM requests
 * 16  u64 remoteAddress RDMA WRITE target address; FLAG_CREDIT (ACK, SEND): payload bytes
 *                       the credit's sender has taken into receives so far
 * 24  u32 rkey          RDMA WRITE target key; FLAG_CREDIT (ACK, SEND): the credit's receive bytes
 * 28  u32 aux           RNR NAK: the delay the responder asks for, in microseconds;
 *                       FLAG_CREDIT (ACK, SEND): the credit's receive count
 * </pre>
 *
 * <p>Receive credits, as the credit count in an InfiniBand RC ACK (IBTA, AETH) but with a
 * use of their own: every ACK, and every SEND going the other way, tells the requester how
 * many receives its responder has posted since the queue pair was created (mod 2^32) and
 * the capacity of the smallest one still waiting, and how many payload bytes it has taken
 * into receives ({@link #FLAG_CREDIT}). A SEND that lands
 * in a receive so credited cannot meet an RNR or a length error, and TCP delivers what it
 * accepted or breaks the connection, so the requester completes it once written and marks
 * it {@link #FLAG_NO_ACK}: the responder does not acknowledge it. docs/transports.md says
 * what that saves. A credit also ends an RNR backoff early: a responder that NAKed a SEND
 * for want of a receive sends one on an ACK as soon as a receive is posted.
 */
final class FrameHeader {
    static final int LENGTH = 32;

    static final int TYPE_OFFSET = 0;
    static final int STATUS_OFFSET = 1;
    static final int FLAGS_OFFSET = 2;
    static final int SEQUENCE_OFFSET = 4;
    static final int LENGTH_OFFSET = 8;
    static final int IMMEDIATE_OFFSET = 12;
    static final int REMOTE_ADDRESS_OFFSET = 16;
    static final int RKEY_OFFSET = 24;
    static final int AUX_OFFSET = 28;
    /** {@link #FLAG_CREDIT}: receives posted since the queue pair was created, mod 2^32. */
    static final int CREDIT_RECEIVES_OFFSET = AUX_OFFSET;
    /** {@link #FLAG_CREDIT}: the capacity in bytes of the smallest posted receive not yet consumed. */
    static final int CREDIT_BYTES_OFFSET = RKEY_OFFSET;
    /** {@link #FLAG_CREDIT}: payload bytes of the requests that consumed a receive, taken so far. */
    static final int CREDIT_TAKEN_OFFSET = REMOTE_ADDRESS_OFFSET;

    /** Request flag: sent under a receive credit and completed once written; no ACK wanted. */
    static final short FLAG_NO_ACK = 1;
    /** The frame (an ACK or a SEND) grants a receive credit in its credit fields. */
    static final short FLAG_CREDIT = 2;

    static final byte TYPE_SEND = 1;
    static final byte TYPE_SEND_IMM = 2;
    static final byte TYPE_WRITE = 3;
    static final byte TYPE_WRITE_IMM = 4;
    static final byte TYPE_ACK = 16;
    static final byte TYPE_NAK = 17;

    /** Receiver not ready: no RECV was posted; the requester retries after {@link #aux()} µs. */
    static final byte STATUS_RNR = 1;
    /** Bad rkey, range or access rights for an RDMA WRITE. */
    static final byte STATUS_REMOTE_ACCESS = 2;
    /** The request cannot be executed (e.g. it does not fit the posted receive). */
    static final byte STATUS_INVALID_REQUEST = 3;

    private ByteBuffer buffer;

    /** Points the flyweight at a buffer of at least {@link #LENGTH} bytes (absolute access at 0). */
    FrameHeader wrap(ByteBuffer buffer) {
        this.buffer = buffer;
        return this;
    }

    byte type() { return buffer.get(TYPE_OFFSET); }
    byte status() { return buffer.get(STATUS_OFFSET); }
    short flags() { return buffer.getShort(FLAGS_OFFSET); }
    int sequence() { return buffer.getInt(SEQUENCE_OFFSET); }
    int length() { return buffer.getInt(LENGTH_OFFSET); }
    int immediate() { return buffer.getInt(IMMEDIATE_OFFSET); }
    long remoteAddress() { return buffer.getLong(REMOTE_ADDRESS_OFFSET); }
    int rkey() { return buffer.getInt(RKEY_OFFSET); }
    int aux() { return buffer.getInt(AUX_OFFSET); }
    int creditReceives() { return buffer.getInt(CREDIT_RECEIVES_OFFSET); }
    int creditBytes() { return buffer.getInt(CREDIT_BYTES_OFFSET); }
    long creditTaken() { return buffer.getLong(CREDIT_TAKEN_OFFSET); }

    /** Writes every field and rewinds the buffer to cover exactly the header. */
    FrameHeader set(byte type, byte status, int sequence, int length, int immediate,
                    long remoteAddress, int rkey, int aux) {
        buffer.put(TYPE_OFFSET, type);
        buffer.put(STATUS_OFFSET, status);
        buffer.putShort(FLAGS_OFFSET, (short) 0);
        buffer.putInt(SEQUENCE_OFFSET, sequence);
        buffer.putInt(LENGTH_OFFSET, length);
        buffer.putInt(IMMEDIATE_OFFSET, immediate);
        buffer.putLong(REMOTE_ADDRESS_OFFSET, remoteAddress);
        buffer.putInt(RKEY_OFFSET, rkey);
        buffer.putInt(AUX_OFFSET, aux);
        buffer.clear().limit(LENGTH);
        return this;
    }

    /** Sets the flags of a header {@link #set} wrote. */
    FrameHeader flags(short flags) {
        buffer.putShort(FLAGS_OFFSET, flags);
        return this;
    }

    /** Adds a receive credit to a header {@link #set} wrote (an ACK's or a SEND's: their credit fields are free). */
    FrameHeader credit(long receivesPosted, int smallestReceiveBytes, long bytesTaken) {
        buffer.putShort(FLAGS_OFFSET, (short) (buffer.getShort(FLAGS_OFFSET) | FLAG_CREDIT));
        buffer.putInt(CREDIT_RECEIVES_OFFSET, (int) receivesPosted);
        buffer.putInt(CREDIT_BYTES_OFFSET, smallestReceiveBytes);
        buffer.putLong(CREDIT_TAKEN_OFFSET, bytesTaken);
        return this;
    }

    boolean grantsCredit() {
        return (flags() & FLAG_CREDIT) != 0;
    }

    static boolean isRequest(byte type) {
        return type >= TYPE_SEND && type <= TYPE_WRITE_IMM;
    }

    static boolean isWrite(byte type) {
        return type == TYPE_WRITE || type == TYPE_WRITE_IMM;
    }

    static boolean hasImmediate(byte type) {
        return type == TYPE_SEND_IMM || type == TYPE_WRITE_IMM;
    }

    static String typeName(byte type) {
        switch (type) {
            case TYPE_SEND: return "SEND";
            case TYPE_SEND_IMM: return "SEND_IMM";
            case TYPE_WRITE: return "WRITE";
            case TYPE_WRITE_IMM: return "WRITE_IMM";
            case TYPE_ACK: return "ACK";
            case TYPE_NAK: return "NAK";
            default: return "type " + (type & 0xFF);
        }
    }
}
