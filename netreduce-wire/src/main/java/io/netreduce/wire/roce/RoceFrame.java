package io.netreduce.wire.roce;

import java.nio.ByteBuffer;

/**
 * Parses one RoCEv2 datagram (BTH .. ICRC, the UDP payload) in place and exposes where
 * its parts are. Checks structure only (lengths, TVer, opcode, pad); the ICRC is checked
 * separately with {@link Icrc} because it needs the addresses. Reusable, allocation-free.
 */
public final class RoceFrame {
    private final Bth bth = new Bth();
    private final Reth reth = new Reth();
    private final Aeth aeth = new Aeth();
    private final ImmDt immDt = new ImmDt();

    private ByteBuffer buffer;
    private int offset;
    private int length;
    private int opcode;
    private int payloadOffset;
    private int payloadLength;
    private FrameError error = FrameError.NONE;

    /** Parses the datagram at [offset, offset + length); returns {@link FrameError#NONE} if well formed. */
    public FrameError wrap(ByteBuffer buffer, int offset, int length) {
        this.buffer = buffer;
        this.offset = offset;
        this.length = length;
        this.payloadOffset = 0;
        this.payloadLength = 0;
        error = parse();
        return error;
    }

    private FrameError parse() {
        if (length < Bth.LENGTH + Icrc.LENGTH) {
            return FrameError.TRUNCATED;
        }
        bth.wrap(buffer, offset);
        opcode = bth.opcode();
        if (bth.transportVersion() != 0) {
            return FrameError.BAD_TRANSPORT_VERSION;
        }
        if (!Opcode.isKnown(opcode)) {
            return FrameError.UNKNOWN_OPCODE;
        }
        int headers = Bth.LENGTH + Opcode.extensionHeaderLength(opcode);
        int rest = length - headers - Icrc.LENGTH;
        if (rest < 0) {
            return FrameError.TRUNCATED;
        }
        int pad = bth.padCount();
        if (pad > rest || (!Opcode.carriesPayload(opcode) && rest != 0)) {
            return FrameError.BAD_PAD;
        }
        if (Opcode.hasReth(opcode)) {
            reth.wrap(buffer, offset + Bth.LENGTH);
        }
        if (Opcode.hasImmediate(opcode)) {
            immDt.wrap(buffer, offset + Opcode.immediateOffset(opcode));
        }
        if (Opcode.hasAeth(opcode)) {
            aeth.wrap(buffer, offset + Bth.LENGTH);
        }
        payloadOffset = offset + headers;
        payloadLength = rest - pad;
        return FrameError.NONE;
    }

    public FrameError error() {
        return error;
    }

    public ByteBuffer buffer() {
        return buffer;
    }

    public int offset() {
        return offset;
    }

    /** Datagram length, BTH through ICRC. */
    public int length() {
        return length;
    }

    public int opcode() {
        return opcode;
    }

    public Bth bth() {
        return bth;
    }

    /** Valid only if {@link Opcode#hasReth} holds for the opcode. */
    public Reth reth() {
        return reth;
    }

    /** Valid only if {@link Opcode#hasAeth} holds for the opcode. */
    public Aeth aeth() {
        return aeth;
    }

    /** Valid only if {@link Opcode#hasImmediate} holds for the opcode. */
    public ImmDt immDt() {
        return immDt;
    }

    /** Absolute offset of the payload in {@link #buffer()}. */
    public int payloadOffset() {
        return payloadOffset;
    }

    /** Payload bytes, pad excluded. */
    public int payloadLength() {
        return payloadLength;
    }

    /** Absolute offset of the ICRC in {@link #buffer()}. */
    public int icrcOffset() {
        return offset + length - Icrc.LENGTH;
    }

    /** Datagram length for a packet with this opcode and payload length (pad and ICRC included). */
    public static int datagramLength(int opcode, int payloadLength) {
        return Bth.LENGTH + Opcode.extensionHeaderLength(opcode) + payloadLength + padFor(payloadLength) + Icrc.LENGTH;
    }

    /** Pad bytes that round a payload up to a multiple of 4. */
    public static int padFor(int payloadLength) {
        return (-payloadLength) & 3;
    }
}
