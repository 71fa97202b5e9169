package io.netreduce.wire.roce;

import java.nio.ByteBuffer;

/**
 * Flyweight over the ACK Extended Transport Header (4 bytes): syndrome, then the
 * responder's 24-bit MSN. Also decodes syndromes (ACK / RNR NAK / NAK) and the RNR
 * timer table of the InfiniBand specification (vol. 1, the AETH syndrome), as ibv_modify_qp(3) lists it.
 */
public final class Aeth {
    public static final int LENGTH = 4;
    public static final int SYNDROME_OFFSET = 0;
    public static final int MSN_OFFSET = 0;

    /** ACK with "invalid/unlimited credits", what rxe sends on every ACK. */
    public static final int SYNDROME_ACK = 0x1F;
    /** RNR NAK base; the low 5 bits are the timer code. */
    public static final int SYNDROME_RNR_NAK = 0x20;
    public static final int SYNDROME_NAK_PSN_SEQUENCE_ERROR = 0x60;
    public static final int SYNDROME_NAK_INVALID_REQUEST = 0x61;
    public static final int SYNDROME_NAK_REMOTE_ACCESS_ERROR = 0x62;
    public static final int SYNDROME_NAK_REMOTE_OPERATIONAL_ERROR = 0x63;

    public static final int TYPE_ACK = 0;
    public static final int TYPE_RNR_NAK = 1;
    public static final int TYPE_NAK = 3;

    /** RNR NAK timer codes 0..31 in microseconds (code 0 means 655.36 ms). */
    private static final long[] RNR_TIMER_MICROS = {
        655_360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1_280, 1_920,
        2_560, 3_840, 5_120, 7_680, 10_240, 15_360, 20_480, 30_720, 40_960, 61_440, 81_920,
        122_880, 163_840, 245_760, 327_680, 491_520
    };

    private ByteBuffer buffer;
    private int offset;

    public Aeth wrap(ByteBuffer buffer, int offset) {
        this.buffer = buffer;
        this.offset = offset;
        return this;
    }

    public int syndrome() {
        return buffer.get(offset + SYNDROME_OFFSET) & 0xFF;
    }

    public int msn() {
        return buffer.getInt(offset + MSN_OFFSET) & Psn.MASK;
    }

    public Aeth set(int syndrome, int msn) {
        buffer.putInt(offset, (syndrome << 24) | (msn & Psn.MASK));
        return this;
    }

    /** 0 ACK, 1 RNR NAK, 3 NAK (2 is reserved). */
    public static int type(int syndrome) {
        return (syndrome >>> 5) & 0x3;
    }

    public static boolean isAck(int syndrome) {
        return type(syndrome) == TYPE_ACK;
    }

    public static boolean isRnrNak(int syndrome) {
        return type(syndrome) == TYPE_RNR_NAK;
    }

    public static boolean isNak(int syndrome) {
        return type(syndrome) == TYPE_NAK;
    }

    public static int rnrNak(int timerCode) {
        return SYNDROME_RNR_NAK | (timerCode & 0x1F);
    }

    /** Delay an RNR NAK's timer code asks for, in microseconds. */
    public static long rnrTimerMicros(int timerCode) {
        return RNR_TIMER_MICROS[timerCode & 0x1F];
    }

    /** Smallest timer code whose delay is at least {@code micros} (31 if none is). */
    public static int rnrTimerCode(long micros) {
        int best = 31;
        for (int code = 1; code < 32; code++) {
            if (RNR_TIMER_MICROS[code] >= micros && RNR_TIMER_MICROS[code] < RNR_TIMER_MICROS[best]) {
                best = code;
            }
        }
        return best;
    }
}
