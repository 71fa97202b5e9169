package io.netreduce.collectives.algorithm;

import io.netreduce.wire.ina.InaHeader;
import java.nio.ByteBuffer;
import java.nio.FloatBuffer;

/**
 * A direct float tensor in the payload byte order that grows to the largest length asked
 * for and is then reused, for collectives that need a full-length intermediate (a
 * reduce-scatter's partial results). Allocated rarely: doubling bounds the reallocations.
 */
public final class ScratchTensor {
    private FloatBuffer buffer;

    /** A view of {@code elements} elements (position 0); its contents are undefined. */
    public FloatBuffer take(int elements) {
        if (buffer == null || buffer.capacity() < elements) {
            int grown = Math.max(elements, buffer == null ? 0 : 2 * buffer.capacity());
            buffer = ByteBuffer.allocateDirect(4 * grown).order(InaHeader.PAYLOAD_ORDER).asFloatBuffer();
        }
        return buffer.duplicate().clear().limit(elements);
    }
}
