package io.netreduce.wire.roce;

/** Why a datagram is not a well-formed RC packet. Each maps to a drop counter. */
public enum FrameError {
    NONE,
    /** Shorter than BTH + extension headers + ICRC. */
    TRUNCATED,
    /** BTH TVer is not 0. */
    BAD_TRANSPORT_VERSION,
    /** Not an RC opcode this library handles. */
    UNKNOWN_OPCODE,
    /** Payload plus pad inconsistent with PadCnt (pad larger than payload). */
    BAD_PAD,
    /** Stored ICRC does not match. */
    BAD_ICRC
}
