package io.netreduce.collectives.engine;

import io.netreduce.collectives.algorithm.DirectBuffers;

import java.nio.FloatBuffer;

/**
 * Tells an in-place call from an out-of-place one when the caller passes two buffer
 * objects: two views of the same elements are in place; views that share only some
 * elements would make the algorithms read inputs they have already overwritten, so they
 * are refused before anything is sent.
 */
final class Placement {
    private Placement() {
    }

    /**
     * True if {@code input} and {@code output} name the same elements; false if they do not
     * overlap (as far as can be seen: memory behind read-only views is not visible).
     *
     * @throws IllegalArgumentException if they partly overlap
     */
    static boolean sameElements(FloatBuffer input, FloatBuffer output) {
        if (input == output) {
            return true;
        }
        long n = 4L * output.remaining();
        DirectBuffers.Root in = DirectBuffers.root(input);
        DirectBuffers.Root out = DirectBuffers.root(output);
        if (in != null && out != null && in.buffer() == out.buffer()) {
            return compare(in.byteOffset() + 4L * input.position(), out.byteOffset() + 4L * output.position(), n,
                    input.order() == output.order());
        }
        if (input.hasArray() && output.hasArray() && input.array() == output.array()) {
            return compare(4L * (input.arrayOffset() + input.position()), 4L * (output.arrayOffset() + output.position()),
                    n, true);
        }
        return false;
    }

    private static boolean compare(long inStart, long outStart, long bytes, boolean sameOrder) {
        if (inStart == outStart && sameOrder) {
            return true;
        }
        if (inStart < outStart + bytes && outStart < inStart + bytes) {
            throw new IllegalArgumentException("allReduce input and output overlap without being the same elements "
                    + "(input at byte " + inStart + ", output at byte " + outStart + " of the same memory, " + bytes
                    + " bytes each" + (sameOrder ? "" : ", in different byte orders")
                    + "); pass one buffer for in place, or separate memory");
        }
        return false;
    }
}
