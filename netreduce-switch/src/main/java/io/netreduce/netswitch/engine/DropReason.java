package io.netreduce.netswitch.engine;

import io.netreduce.wire.roce.FrameError;

/** Why the switch dropped a datagram; each has its own counter ({@code drops_total{reason}}). */
public enum DropReason {
    /** Shorter than its headers and ICRC. */
    TRUNCATED,
    /** BTH TVer is not 0. */
    BAD_TRANSPORT_VERSION,
    /** Not an RC opcode. */
    UNKNOWN_OPCODE,
    /** PadCnt inconsistent with the length, or a non-zero pad on aggregated data. */
    BAD_PAD,
    /** Stored ICRC does not match the canonical header of its connection. */
    BAD_ICRC,
    /** No registered connection from this source address with this DestQP. */
    UNKNOWN_CONNECTION,
    /** A request other than SEND on a ring connection (the wire contract only has SENDs). */
    UNSUPPORTED_OPCODE,
    /** First packet too short for an INA header, or a version/dtype the ring does not use. */
    BAD_INA_HEADER,
    /** INA header names another ring than the connection belongs to. */
    INA_RING_MISMATCH,
    /** INA header names another rank than the connection's. */
    INA_RANK_MISMATCH,
    /** INA payload length beyond the ring's, not a multiple of 4, or different from the other ranks'. */
    INA_LENGTH_MISMATCH,
    /** Opcode or payload length does not fit the packet's position in its message. */
    BAD_PACKET_LENGTH,
    /** The packet's message never had its first packet seen: go-back-N will resend it. */
    FIRST_PACKET_LOST,
    /** PSN far outside anything the connection's window could produce. */
    PSN_OUT_OF_WINDOW,
    /** msgId too far ahead, or its slot is still held by an unfinished message. */
    MSG_OUT_OF_WINDOW,
    /** A first packet repeated with another PSN than the one recorded for its message. */
    INCONSISTENT_PSN,
    /** The caller's output batch had no room for the packets this one would emit. */
    OUTPUT_FULL,
    /** The data plane could not hand a datagram to the kernel (socket buffer full). */
    SEND_FAILED;

    private final String label = name().toLowerCase(java.util.Locale.ROOT);

    /** Prometheus label value. */
    public String label() {
        return label;
    }

    static DropReason of(FrameError e) {
        switch (e) {
            case TRUNCATED:
                return TRUNCATED;
            case BAD_TRANSPORT_VERSION:
                return BAD_TRANSPORT_VERSION;
            case UNKNOWN_OPCODE:
                return UNKNOWN_OPCODE;
            case BAD_PAD:
                return BAD_PAD;
            case BAD_ICRC:
                return BAD_ICRC;
            default:
                throw new IllegalArgumentException("not an error: " + e);
        }
    }
}
