package io.netreduce.wire.ina;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Flyweight over the 24-byte in-network-aggregation header that starts the data of every
 * NetReduce message, big-endian (docs/protocol.md, "INA header"):
 *
 * <pre>
 *  0  u8  version        3
 *  1  u8  dtype          {@link #DTYPE_FP32} or {@link #DTYPE_INT32}
 *  2  u8  flags          set by the switch: {@link #FLAG_RESULT} on every result it emits,
 *                        {@link #FLAG_CALL_MISMATCH} on a notice that ranks made different calls; 0 from hosts
 *  3  u8  reserved       0
 *  4  u16 rank           the sender's rank (a result keeps the header of the connection it travels on)
 *  6  u16 contributions  results: how many ranks' payloads the sum holds; 0 from hosts
 *  8  u32 ringId
 * 12  u32 msgId
 * 16  u32 payloadLen     tensor bytes after the header
 * 20  u32 call           the sender's collective call, as a digest its host computes; every rank's
 *                        message must carry the same, or the switch sends mismatch notices
 * </pre>
 *
 * <p>It is the host/switch wire contract: the host writes it into the first bytes of each
 * SEND (a gather list {@code [header, tensor slice]}), the switch reads it from each
 * message's first packet to fill its connection lookup table, and marks the copy it emits
 * with each result, so that a host can tell a complete aggregate from anything else (its
 * predecessor's own tensor, had a packet gone around the switch). Its length is a
 * multiple of 4 so that float lanes line up across ranks.
 */
public final class InaHeader {
    public static final int LENGTH = 24;
    public static final int VERSION = 3;

    public static final int VERSION_OFFSET = 0;
    public static final int DTYPE_OFFSET = 1;
    public static final int FLAGS_OFFSET = 2;
    public static final int RESERVED_OFFSET = 3;
    public static final int RANK_OFFSET = 4;
    public static final int CONTRIBUTIONS_OFFSET = 6;
    public static final int RING_ID_OFFSET = 8;
    public static final int MSG_ID_OFFSET = 12;
    public static final int PAYLOAD_LENGTH_OFFSET = 16;
    public static final int CALL_OFFSET = 20;

    /** Flag: this message is a switch's result, the sum of {@link #contributions()} ranks' payloads. */
    public static final int FLAG_RESULT = 0x01;
    /**
     * Flag: not a result but the switch's notice that this message's ranks called different
     * collectives (their {@link #call()}s differ); the payload is meaningless.
     */
    public static final int FLAG_CALL_MISMATCH = 0x02;

    /** IEEE-754 single precision, summed as floats in rank order. */
    public static final int DTYPE_FP32 = 0;
    /** Two's-complement 32-bit integers (fixed point), summed with wrap-around. */
    public static final int DTYPE_INT32 = 1;

    /**
     * Byte order of the tensor elements that follow the header, the same on every rank (a
     * ring tells the switch when it is created): little-endian, the native order of x86 and
     * ARM hosts, so that a {@code nativeOrder()} direct buffer is sent as it is and summed
     * without byte swaps. The header's own fields stay big-endian, as network fields are.
     */
    public static final ByteOrder PAYLOAD_ORDER = ByteOrder.LITTLE_ENDIAN;

    private ByteBuffer buffer;
    private int offset;

    public InaHeader wrap(ByteBuffer buffer, int offset) {
        this.buffer = buffer;
        this.offset = offset;
        return this;
    }

    public int version() {
        return buffer.get(offset + VERSION_OFFSET) & 0xFF;
    }

    public int dtype() {
        return buffer.get(offset + DTYPE_OFFSET) & 0xFF;
    }

    public int flags() {
        return buffer.get(offset + FLAGS_OFFSET) & 0xFF;
    }

    /** True if a switch emitted this message as a result. */
    public boolean isResult() {
        return (flags() & FLAG_RESULT) != 0;
    }

    /** True if this is the switch's notice that the ranks' calls for this message differ. */
    public boolean isCallMismatch() {
        return (flags() & FLAG_CALL_MISMATCH) != 0;
    }

    /** The sender's call digest (see {@link #CALL_OFFSET}). */
    public int call() {
        return buffer.getInt(offset + CALL_OFFSET);
    }

    public int rank() {
        return buffer.getShort(offset + RANK_OFFSET) & 0xFFFF;
    }

    /** In a result: how many ranks' payloads were summed; 0 in a host's message. */
    public int contributions() {
        return buffer.getShort(offset + CONTRIBUTIONS_OFFSET) & 0xFFFF;
    }

    public int ringId() {
        return buffer.getInt(offset + RING_ID_OFFSET);
    }

    public int msgId() {
        return buffer.getInt(offset + MSG_ID_OFFSET);
    }

    /** Payload bytes that follow the header in this message. */
    public int payloadLength() {
        return buffer.getInt(offset + PAYLOAD_LENGTH_OFFSET);
    }

    /** Writes a host's header: this version, no flags, no contributions. */
    public InaHeader set(int dtype, int rank, int ringId, int msgId, int payloadLength, int call) {
        buffer.put(offset + VERSION_OFFSET, (byte) VERSION);
        buffer.put(offset + DTYPE_OFFSET, (byte) dtype);
        buffer.put(offset + FLAGS_OFFSET, (byte) 0);
        buffer.put(offset + RESERVED_OFFSET, (byte) 0);
        buffer.putShort(offset + RANK_OFFSET, (short) rank);
        buffer.putShort(offset + CONTRIBUTIONS_OFFSET, (short) 0);
        buffer.putInt(offset + RING_ID_OFFSET, ringId);
        buffer.putInt(offset + MSG_ID_OFFSET, msgId);
        buffer.putInt(offset + PAYLOAD_LENGTH_OFFSET, payloadLength);
        buffer.putInt(offset + CALL_OFFSET, call);
        return this;
    }

    /** Marks the header at {@code at} of {@code b} as a result summing {@code contributions} ranks. */
    public static void markResult(ByteBuffer b, int at, int contributions) {
        b.put(at + FLAGS_OFFSET, (byte) FLAG_RESULT);
        b.putShort(at + CONTRIBUTIONS_OFFSET, (short) contributions);
    }

    /** Marks the header at {@code at} of {@code b} as a call-mismatch notice. */
    public static void markCallMismatch(ByteBuffer b, int at) {
        b.put(at + FLAGS_OFFSET, (byte) FLAG_CALL_MISMATCH);
        b.putShort(at + CONTRIBUTIONS_OFFSET, (short) 0);
    }

    public static boolean isKnownDtype(int dtype) {
        return dtype == DTYPE_FP32 || dtype == DTYPE_INT32;
    }

    /** "fp32" or "int32", as the control plane spells a dtype. */
    public static String dtypeName(int dtype) {
        return dtype == DTYPE_FP32 ? "fp32" : dtype == DTYPE_INT32 ? "int32" : "dtype" + dtype;
    }

    /** The dtype a control-plane name ("fp32", "float32", "int32") stands for, or -1. */
    public static int dtypeOf(String name) {
        switch (name) {
            case "fp32":
            case "float32":
                return DTYPE_FP32;
            case "int32":
                return DTYPE_INT32;
            default:
                return -1;
        }
    }

    @Override
    public String toString() {
        return "INA{v" + version() + " dtype=" + dtype() + (isResult() ? " result of " + contributions() : "")
                + (isCallMismatch() ? " call mismatch" : "") + " rank=" + rank() + " ring="
                + Integer.toUnsignedString(ringId()) + " msg=" + msgId() + " len=" + payloadLength() + " call="
                + Integer.toHexString(call()) + "}";
    }
}
