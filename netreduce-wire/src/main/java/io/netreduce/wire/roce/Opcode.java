package io.netreduce.wire.roce;

/**
 * RC opcodes (BTH byte 0) and the per-opcode facts the datapath needs: which extension
 * headers follow the BTH, whether the packet starts or ends a message, whether it is a
 * request or a response. Values from IBTA / {@code ib_pack.h}.
 */
public final class Opcode {
    public static final int SEND_FIRST = 0x00;
    public static final int SEND_MIDDLE = 0x01;
    public static final int SEND_LAST = 0x02;
    public static final int SEND_LAST_WITH_IMMEDIATE = 0x03;
    public static final int SEND_ONLY = 0x04;
    public static final int SEND_ONLY_WITH_IMMEDIATE = 0x05;
    public static final int RDMA_WRITE_FIRST = 0x06;
    public static final int RDMA_WRITE_MIDDLE = 0x07;
    public static final int RDMA_WRITE_LAST = 0x08;
    public static final int RDMA_WRITE_LAST_WITH_IMMEDIATE = 0x09;
    public static final int RDMA_WRITE_ONLY = 0x0A;
    public static final int RDMA_WRITE_ONLY_WITH_IMMEDIATE = 0x0B;
    public static final int RDMA_READ_REQUEST = 0x0C;
    public static final int RDMA_READ_RESPONSE_FIRST = 0x0D;
    public static final int RDMA_READ_RESPONSE_MIDDLE = 0x0E;
    public static final int RDMA_READ_RESPONSE_LAST = 0x0F;
    public static final int RDMA_READ_RESPONSE_ONLY = 0x10;
    public static final int ACKNOWLEDGE = 0x11;
    public static final int ATOMIC_ACKNOWLEDGE = 0x12;
    /** Congestion Notification Packet (RoCEv2 annex). */
    public static final int CNP = 0x81;

    private static final int F_KNOWN = 1;
    private static final int F_REQUEST = 1 << 1;
    private static final int F_START = 1 << 2;
    private static final int F_END = 1 << 3;
    private static final int F_RETH = 1 << 4;
    private static final int F_IMM = 1 << 5;
    private static final int F_AETH = 1 << 6;
    private static final int F_SEND = 1 << 7;
    private static final int F_WRITE = 1 << 8;
    private static final int F_PAYLOAD = 1 << 9;

    private static final int[] FLAGS = new int[256];
    private static final String[] NAMES = new String[256];

    static {
        def(SEND_FIRST, "SEND First", F_REQUEST | F_START | F_SEND | F_PAYLOAD);
        def(SEND_MIDDLE, "SEND Middle", F_REQUEST | F_SEND | F_PAYLOAD);
        def(SEND_LAST, "SEND Last", F_REQUEST | F_END | F_SEND | F_PAYLOAD);
        def(SEND_LAST_WITH_IMMEDIATE, "SEND Last with Immediate", F_REQUEST | F_END | F_SEND | F_IMM | F_PAYLOAD);
        def(SEND_ONLY, "SEND Only", F_REQUEST | F_START | F_END | F_SEND | F_PAYLOAD);
        def(SEND_ONLY_WITH_IMMEDIATE, "SEND Only with Immediate",
                F_REQUEST | F_START | F_END | F_SEND | F_IMM | F_PAYLOAD);
        def(RDMA_WRITE_FIRST, "RDMA WRITE First", F_REQUEST | F_START | F_WRITE | F_RETH | F_PAYLOAD);
        def(RDMA_WRITE_MIDDLE, "RDMA WRITE Middle", F_REQUEST | F_WRITE | F_PAYLOAD);
        def(RDMA_WRITE_LAST, "RDMA WRITE Last", F_REQUEST | F_END | F_WRITE | F_PAYLOAD);
        def(RDMA_WRITE_LAST_WITH_IMMEDIATE, "RDMA WRITE Last with Immediate",
                F_REQUEST | F_END | F_WRITE | F_IMM | F_PAYLOAD);
        def(RDMA_WRITE_ONLY, "RDMA WRITE Only", F_REQUEST | F_START | F_END | F_WRITE | F_RETH | F_PAYLOAD);
        def(RDMA_WRITE_ONLY_WITH_IMMEDIATE, "RDMA WRITE Only with Immediate",
                F_REQUEST | F_START | F_END | F_WRITE | F_RETH | F_IMM | F_PAYLOAD);
        def(RDMA_READ_REQUEST, "RDMA READ Request", F_REQUEST | F_START | F_END | F_RETH);
        def(RDMA_READ_RESPONSE_FIRST, "RDMA READ Response First", F_START | F_AETH | F_PAYLOAD);
        def(RDMA_READ_RESPONSE_MIDDLE, "RDMA READ Response Middle", F_PAYLOAD);
        def(RDMA_READ_RESPONSE_LAST, "RDMA READ Response Last", F_END | F_AETH | F_PAYLOAD);
        def(RDMA_READ_RESPONSE_ONLY, "RDMA READ Response Only", F_START | F_END | F_AETH | F_PAYLOAD);
        def(ACKNOWLEDGE, "Acknowledge", F_AETH);
    }

    private Opcode() {
    }

    private static void def(int op, String name, int flags) {
        FLAGS[op] = flags | F_KNOWN;
        NAMES[op] = name;
    }

    private static boolean has(int op, int flag) {
        return (FLAGS[op & 0xFF] & flag) != 0;
    }

    /** True for the RC opcodes this library sends or understands. */
    public static boolean isKnown(int op) {
        return has(op, F_KNOWN);
    }

    public static boolean isRequest(int op) {
        return has(op, F_REQUEST);
    }

    public static boolean isSend(int op) {
        return has(op, F_SEND);
    }

    public static boolean isWrite(int op) {
        return has(op, F_WRITE);
    }

    /** First or Only: the packet starts a message. */
    public static boolean isStart(int op) {
        return has(op, F_START);
    }

    /** Last or Only: the packet ends a message. */
    public static boolean isEnd(int op) {
        return has(op, F_END);
    }

    public static boolean hasReth(int op) {
        return has(op, F_RETH);
    }

    public static boolean hasImmediate(int op) {
        return has(op, F_IMM);
    }

    public static boolean hasAeth(int op) {
        return has(op, F_AETH);
    }

    public static boolean carriesPayload(int op) {
        return has(op, F_PAYLOAD);
    }

    /** Bytes of extension headers between the BTH and the payload. */
    public static int extensionHeaderLength(int op) {
        int f = FLAGS[op & 0xFF];
        return ((f & F_RETH) != 0 ? Reth.LENGTH : 0)
                + ((f & F_IMM) != 0 ? ImmDt.LENGTH : 0)
                + ((f & F_AETH) != 0 ? Aeth.LENGTH : 0);
    }

    /** Offset of the ImmDt header from the start of the BTH (RETH, if present, comes first). */
    public static int immediateOffset(int op) {
        return Bth.LENGTH + (hasReth(op) ? Reth.LENGTH : 0);
    }

    public static String name(int op) {
        String n = NAMES[op & 0xFF];
        return n != null ? n : String.format("opcode 0x%02x", op & 0xFF);
    }

    /** The SEND opcode for packet {@code index} of {@code count} (First/Middle/Last/Only). */
    public static int send(int index, int count, boolean immediate) {
        if (count == 1) {
            return immediate ? SEND_ONLY_WITH_IMMEDIATE : SEND_ONLY;
        }
        if (index == 0) {
            return SEND_FIRST;
        }
        if (index < count - 1) {
            return SEND_MIDDLE;
        }
        return immediate ? SEND_LAST_WITH_IMMEDIATE : SEND_LAST;
    }

    /** The RDMA WRITE opcode for packet {@code index} of {@code count}. */
    public static int write(int index, int count, boolean immediate) {
        if (count == 1) {
            return immediate ? RDMA_WRITE_ONLY_WITH_IMMEDIATE : RDMA_WRITE_ONLY;
        }
        if (index == 0) {
            return RDMA_WRITE_FIRST;
        }
        if (index < count - 1) {
            return RDMA_WRITE_MIDDLE;
        }
        return immediate ? RDMA_WRITE_LAST_WITH_IMMEDIATE : RDMA_WRITE_LAST;
    }
}
