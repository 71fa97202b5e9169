package io.netreduce.wire.control;

import io.netreduce.wire.ina.InaHeader;
import java.nio.ByteOrder;
import java.util.Objects;

/**
 * What a ring asks of a NetReduce switch when it is created ({@code POST /rings}): its id
 * (the INA header's ringId, an unsigned 32-bit number), the number of ranks P, the host
 * window N (messages in flight per rank), the largest message payload (tensor bytes after
 * the INA header), the path MTU, the element type and the byte order of the tensor lanes.
 * Only the shape is checked here; the switch decides whether it can hold the ring.
 */
public record RingSpec(int ringId, int ranks, int window, int messagePayloadLength, int mtu, int dtype,
                       ByteOrder byteOrder) {

    public RingSpec {
        Objects.requireNonNull(byteOrder, "byteOrder");
        if (!InaHeader.isKnownDtype(dtype)) {
            throw new IllegalArgumentException("unknown dtype " + dtype + " (" + InaHeader.DTYPE_FP32 + " = fp32, "
                    + InaHeader.DTYPE_INT32 + " = int32)");
        }
    }

    /** A float32 ring in the payload byte order every host uses. */
    public static RingSpec fp32(int ringId, int ranks, int window, int messagePayloadLength, int mtu) {
        return new RingSpec(ringId, ranks, window, messagePayloadLength, mtu, InaHeader.DTYPE_FP32,
                InaHeader.PAYLOAD_ORDER);
    }

    /** The ring id as the control plane's paths and messages spell it (unsigned decimal). */
    public String id() {
        return Integer.toUnsignedString(ringId);
    }
}
