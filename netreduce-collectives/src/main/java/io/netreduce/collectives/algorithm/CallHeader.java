package io.netreduce.collectives.algorithm;

import io.netreduce.collectives.Collective;
import io.netreduce.collectives.ReduceOp;
import java.nio.ByteBuffer;

/**
 * Flyweight over the 24-byte header that starts every host-to-host message of the ring
 * algorithms, big-endian (docs/protocol.md, "Ring message header"). Besides what a
 * message needs (sender, message id, payload length) it carries the sender's whole call,
 * so that the receiving rank compares it with its own at the first message and the ranks
 * agree on every collective without a word through the rendezvous store:
 *
 * <pre>
 *  0  u8  version      {@link #VERSION}
 *  1  u8  collective   {@link Collective} ordinal + 1
 *  2  u8  op           {@link ReduceOp} ordinal, as called (AVG is not SUM)
 *  3  u8  reserved     0
 *  4  u16 rank         the sender
 *  6  u16 root         a broadcast's root, else 0xFFFF
 *  8  u32 call         the call's sequence number (low 32 bits; 1, 2, ... on every rank)
 * 12  u32 count        the call's element count
 * 16  u32 msgId        this message's number on its connection
 * 20  u32 payloadLen   tensor bytes after the header
 * </pre>
 *
 * These messages never cross a NetReduce switch (its messages start with the INA header);
 * the length is a multiple of 4 so that the tensor slice after it stays aligned to floats.
 */
public final class CallHeader {
    public static final int LENGTH = 24;
    public static final int VERSION = 1;

    public static final int VERSION_OFFSET = 0;
    public static final int COLLECTIVE_OFFSET = 1;
    public static final int OP_OFFSET = 2;
    public static final int RESERVED_OFFSET = 3;
    public static final int RANK_OFFSET = 4;
    public static final int ROOT_OFFSET = 6;
    public static final int CALL_OFFSET = 8;
    public static final int COUNT_OFFSET = 12;
    public static final int MSG_ID_OFFSET = 16;
    public static final int PAYLOAD_LENGTH_OFFSET = 20;

    private static final int NO_ROOT = 0xFFFF;
    private static final Collective[] KINDS = Collective.values();
    private static final ReduceOp[] OPS = ReduceOp.values();

    private ByteBuffer buffer;
    private int offset;

    public CallHeader wrap(ByteBuffer buffer, int offset) {
        this.buffer = buffer;
        this.offset = offset;
        return this;
    }

    /** Writes a message's header for {@code call}, sent by {@code rank}. */
    public CallHeader set(CollectiveCall call, int rank, int msgId, int payloadLength) {
        buffer.put(offset + VERSION_OFFSET, (byte) VERSION);
        buffer.put(offset + COLLECTIVE_OFFSET, (byte) (call.kind().ordinal() + 1));
        buffer.put(offset + OP_OFFSET, (byte) call.op().ordinal());
        buffer.put(offset + RESERVED_OFFSET, (byte) 0);
        buffer.putShort(offset + RANK_OFFSET, (short) rank);
        buffer.putShort(offset + ROOT_OFFSET, (short) (call.root() < 0 ? NO_ROOT : call.root()));
        buffer.putInt(offset + CALL_OFFSET, (int) call.seq());
        buffer.putInt(offset + COUNT_OFFSET, call.count());
        buffer.putInt(offset + MSG_ID_OFFSET, msgId);
        buffer.putInt(offset + PAYLOAD_LENGTH_OFFSET, payloadLength);
        return this;
    }

    public int version() {
        return buffer.get(offset + VERSION_OFFSET) & 0xFF;
    }

    /** The sender's collective, or null for a byte that names none (a corrupt or foreign message). */
    public Collective kind() {
        int k = (buffer.get(offset + COLLECTIVE_OFFSET) & 0xFF) - 1;
        return k >= 0 && k < KINDS.length ? KINDS[k] : null;
    }

    /** The sender's reduction, or null for a byte that names none. */
    public ReduceOp op() {
        int o = buffer.get(offset + OP_OFFSET) & 0xFF;
        return o < OPS.length ? OPS[o] : null;
    }

    public int rank() {
        return buffer.getShort(offset + RANK_OFFSET) & 0xFFFF;
    }

    /** The broadcast's root, or -1. */
    public int root() {
        int r = buffer.getShort(offset + ROOT_OFFSET) & 0xFFFF;
        return r == NO_ROOT ? -1 : r;
    }

    /** The low 32 bits of the sender's call sequence number. */
    public int seq() {
        return buffer.getInt(offset + CALL_OFFSET);
    }

    public int count() {
        return buffer.getInt(offset + COUNT_OFFSET);
    }

    public int msgId() {
        return buffer.getInt(offset + MSG_ID_OFFSET);
    }

    public int payloadLength() {
        return buffer.getInt(offset + PAYLOAD_LENGTH_OFFSET);
    }

    /** The sender's call as a user would read it: "collective #3 allReduce(5000, MAX)". */
    public String describeCall() {
        Collective k = kind();
        ReduceOp o = op();
        StringBuilder b = new StringBuilder("collective #").append(Integer.toUnsignedString(seq())).append(' ');
        if (k == null || o == null || version() != VERSION) {
            return b.append("of an unknown kind (header version ").append(version()).append(", kind byte ")
                    .append(buffer.get(offset + COLLECTIVE_OFFSET) & 0xFF).append(')').toString();
        }
        return CollectiveCall.describe(b, k, o, count(), root()).toString();
    }

    @Override
    public String toString() {
        return "Call{v" + version() + " " + describeCall() + " rank=" + rank() + " msg=" + msgId() + " len="
                + payloadLength() + "}";
    }
}
