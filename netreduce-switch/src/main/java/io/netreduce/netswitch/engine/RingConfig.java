package io.netreduce.netswitch.engine;

import io.netreduce.wire.roce.PathMtu;

import io.netreduce.wire.ina.InaHeader;
import io.netreduce.wire.roce.Bth;
import io.netreduce.wire.roce.ImmDt;

import io.netreduce.wire.control.RingSpec;
import java.nio.ByteOrder;
import java.util.Objects;

/**
 * What a ring asks of the switch: its id (the INA header's ringId), the number of ranks P,
 * the host window N (messages in flight per rank), the largest message payload (tensor bytes
 * after the INA header), the path MTU, the element type and the byte order of the
 * tensor lanes. All ranks of a ring share these, so packet j of message i covers the same
 * element range on every rank.
 *
 * <p>The aggregator memory the ring needs is fixed here: 2N message slots, each with
 * packetsPerMessage packet positions holding P rank buffers and the sum's bytes (MTU bytes
 * each), plus a small header store per rank and packet and one typed running sum.
 */
public record RingConfig(int ringId, int ranks, int window, int messagePayloadLength, int mtu, int dtype,
                         ByteOrder byteOrder) {

    /** Rank bitmaps are one {@code long}, so at most 64 ranks. */
    public static final int MAX_RANKS = 64;
    public static final int MAX_WINDOW = 4096;
    /** Per rank and packet: BTH, an optional ImmDt, and the INA header in a message's first packet. */
    public static final int HEADER_CAPACITY = Bth.LENGTH + ImmDt.LENGTH + InaHeader.LENGTH;

    public RingConfig {
        Objects.requireNonNull(byteOrder, "byteOrder");
        if (ranks < 2 || ranks > MAX_RANKS) {
            throw new IllegalArgumentException("ranks must be in [2, " + MAX_RANKS + "]: " + ranks);
        }
        if (window < 1 || window > MAX_WINDOW) {
            throw new IllegalArgumentException("window must be in [1, " + MAX_WINDOW + "]: " + window);
        }
        PathMtu.check(mtu);
        if (messagePayloadLength <= 0 || messagePayloadLength % 4 != 0) {
            throw new IllegalArgumentException(
                    "message payload length must be a positive multiple of 4 bytes: " + messagePayloadLength);
        }
        if (messagePayloadLength > (1 << 30)) {
            throw new IllegalArgumentException("message payload length above 1 GiB: " + messagePayloadLength);
        }
        if (!InaHeader.isKnownDtype(dtype)) {
            throw new IllegalArgumentException("unknown dtype " + dtype + " (0 = fp32, 1 = int32)");
        }
        long perSlot = (long) packetsFor(messagePayloadLength, mtu) * (ranks + 1) * mtu;
        if (perSlot > Integer.MAX_VALUE - 64) {
            throw new IllegalArgumentException("one message slot would need " + perSlot
                    + " bytes; use shorter messages");
        }
    }

    private static int packetsFor(int payload, int mtu) {
        return (InaHeader.LENGTH + payload + mtu - 1) / mtu;
    }

    /** Bytes of message data: INA header plus payload. */
    public int messageDataLength() {
        return InaHeader.LENGTH + messagePayloadLength;
    }

    /** Packets of a full-length message. */
    public int packetsPerMessage() {
        return packetsFor(messagePayloadLength, mtu);
    }

    /** 2N: a slot is freed only by a first packet one full window ahead. */
    public int slots() {
        return 2 * window;
    }

    /** Aggregator memory this ring reserves against the switch budget. */
    public long aggregatorBytes() {
        long positions = (long) slots() * packetsPerMessage();
        // P rank buffers + the sum's bytes, plus each rank's headers and one typed running sum.
        return positions * (ranks + 1) * mtu + positions * ranks * HEADER_CAPACITY + mtu;
    }

    public String dtypeName() {
        return InaHeader.dtypeName(dtype);
    }

    /** The switch's configuration for a ring the control plane was asked to create. */
    public static RingConfig of(RingSpec s) {
        return new RingConfig(s.ringId(), s.ranks(), s.window(), s.messagePayloadLength(), s.mtu(), s.dtype(),
                s.byteOrder());
    }

    /** The control plane's view of this configuration. */
    public RingSpec spec() {
        return new RingSpec(ringId, ranks, window, messagePayloadLength, mtu, dtype, byteOrder);
    }
}
