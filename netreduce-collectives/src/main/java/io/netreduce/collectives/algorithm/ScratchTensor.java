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
    private ByteBuffer bytes;
    private FloatBuffer buffer;
    private FloatBuffer view;

    /**
     * A view of {@code elements} elements (position 0); its contents are undefined. The same
     * view object comes back while the tensor does not grow (nothing allocated per call), so
     * a caller holds one view of a scratch tensor at a time.
     */
    public FloatBuffer take(int elements) {
        if (buffer == null || buffer.capacity() < elements) {
            int grown = Math.max(elements, buffer == null ? 0 : 2 * buffer.capacity());
            bytes = DirectBuffers.allocate(4 * grown).order(InaHeader.PAYLOAD_ORDER);
            buffer = bytes.asFloatBuffer();
            view = buffer.duplicate();
        }
        return view.clear().limit(elements);
    }

    /** The same memory as bytes (element i at byte 4i), for kernels; valid until the next {@link #take}. */
    public ByteBuffer bytes() {
        return bytes;
    }
}
