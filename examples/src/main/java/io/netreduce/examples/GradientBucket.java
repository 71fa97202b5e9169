package io.netreduce.examples;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.util.List;

/**
 * Packs a model's per-tensor gradients into one flat direct buffer, so that a step
 * needs a single all-reduce instead of one per tensor, as PyTorch DDP and Horovod
 * do with their gradient buckets. The buffer is allocated once and reused every step
 * (fresh memory is expensive to touch, and the collective may register it).
 */
public final class GradientBucket {

    private final List<float[]> tensors;
    private final FloatBuffer flat;

    /** @param tensors the gradient arrays, in an order every worker agrees on */
    public GradientBucket(List<float[]> tensors) {
        this.tensors = List.copyOf(tensors);
        long total = 0;
        for (float[] t : this.tensors) {
            total += t.length;
        }
        if (total == 0 || total > Integer.MAX_VALUE / Float.BYTES) {
            throw new IllegalArgumentException("bucket must hold 1.." + Integer.MAX_VALUE / Float.BYTES
                    + " floats, got " + total);
        }
        // Direct and big-endian (the payload order on the wire): the communicator
        // registers such a buffer once and sums into it in place, without staging.
        this.flat = ByteBuffer.allocateDirect((int) total * Float.BYTES)
                .order(ByteOrder.BIG_ENDIAN).asFloatBuffer();
    }

    /** Copies every tensor into the flat buffer and returns it, positioned at 0, limit at its end. */
    public FloatBuffer pack() {
        flat.clear();
        for (float[] t : tensors) {
            flat.put(t);
        }
        flat.position(0);
        return flat;
    }

    /** Copies the (summed) flat buffer back into the tensors, multiplying by {@code scale}. */
    public void unpack(float scale) {
        int offset = 0;
        for (float[] t : tensors) {
            for (int i = 0; i < t.length; i++) {
                t[i] = flat.get(offset + i) * scale;
            }
            offset += t.length;
        }
    }

    /** The flat buffer itself (for tests and for trainers that fill it directly). */
    public FloatBuffer buffer() {
        return flat;
    }
}
