package io.netreduce.examples;

import java.nio.FloatBuffer;

/**
 * The one thing a data-parallel trainer needs from a collective library: sum a flat
 * buffer of floats element-wise across all workers, in place, so that every worker
 * ends up holding the same bits. The trainers in this module depend only on this
 * interface; {@link CommunicatorGradientSync} implements it with a netreduce
 * {@code Communicator}, so the training code reads the same whatever the backend.
 */
public interface GradientSync extends AutoCloseable {

    /** This worker's rank, 0 &le; rank &lt; {@link #worldSize()}. */
    int rank();

    /** Number of workers taking part. */
    int worldSize();

    /**
     * Replaces the contents of {@code buffer} (position to limit) with the element-wise
     * sum of every worker's buffer. Blocks until the sum has arrived. All workers must
     * call it in the same order with buffers of the same length.
     */
    void sumInPlace(FloatBuffer buffer);

    /**
     * Makes every worker's buffer equal to rank 0's, bitwise: the other ranks
     * contribute zeros and x + 0 = x exactly. Trainers use it once at start so that
     * replicas begin identical even if their initialisation differed.
     */
    default void broadcastFromRank0(FloatBuffer buffer) {
        if (rank() != 0) {
            for (int i = buffer.position(); i < buffer.limit(); i++) {
                buffer.put(i, 0f);
            }
        }
        sumInPlace(buffer);
    }

    @Override
    default void close() {
    }
}
