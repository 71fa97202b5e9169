package io.netreduce.examples;

import java.nio.FloatBuffer;

/** World of one: the sum over a single worker is its own buffer. Used for the reference run. */
public final class SingleProcessSync implements GradientSync {

    @Override
    public int rank() {
        return 0;
    }

    @Override
    public int worldSize() {
        return 1;
    }

    @Override
    public void sumInPlace(FloatBuffer buffer) {
        // nothing to add
    }
}
