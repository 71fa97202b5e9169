package io.netreduce.wire.ina;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Flyweight over the 16-byte in-network-aggregation header that starts the data of every
 * NetReduce message (design brief §3), big-endian:
 * {@code u8 version | u8 dtype | u16 rank | u32 ringId | u32 msgId | u32 payloadLen}.
 *
 * <p>It is part of the host/switch wire contract, so it lives with the RoCE wire format:
 * the host writes it into the first bytes of each SEND (a gather list
 * {@code [header, tensor slice]}), the switch reads it from each message's first packet
 * to fill its connection lookup table, and rewrites it per connection in the result.
 * Its length is a multiple of 4 so that float lanes line up across ranks.
 */
public final class InaHeader {
    public static final int LENGTH = 16;
    public static final int VERSION = 1;

    public static final int VERSION_OFFSET = 0;
    public static final int DTYPE_OFFSET = 1;
    public static final int RANK_OFFSET = 2;
    public static final int RING_ID_OFFSET = 4;
    public static final int MSG_ID_OFFSET = 8;
    public static final int PAYLOAD_LENGTH_OFFSET = 12;

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

    public int rank() {
        return buffer.getShort(offset + RANK_OFFSET) & 0xFFFF;
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

    public InaHeader set(int dtype, int rank, int ringId, int msgId, int payloadLength) {
        buffer.put(offset + VERSION_OFFSET, (byte) VERSION);
        buffer.put(offset + DTYPE_OFFSET, (byte) dtype);
        buffer.putShort(offset + RANK_OFFSET, (short) rank);
        buffer.putInt(offset + RING_ID_OFFSET, ringId);
        buffer.putInt(offset + MSG_ID_OFFSET, msgId);
        buffer.putInt(offset + PAYLOAD_LENGTH_OFFSET, payloadLength);
        return this;
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
        return "INA{v" + version() + " dtype=" + dtype() + " rank=" + rank() + " ring=" + ringId()
                + " msg=" + msgId() + " len=" + payloadLength() + "}";
    }
}
