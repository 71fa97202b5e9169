package io.netreduce.examples;

import io.netreduce.collectives.Communicator;
import io.netreduce.collectives.ReduceOp;

import java.nio.FloatBuffer;

/**
 * {@link GradientSync} on a netreduce {@link Communicator}: the sum is one in-place
 * all-reduce through whichever backend the communicator was opened with ("netreduce"
 * through the switch, or "ring"), and the start-up broadcast is the communicator's own.
 * Closing it closes the communicator.
 */
public final class CommunicatorGradientSync implements GradientSync {

    private final Communicator communicator;

    public CommunicatorGradientSync(Communicator communicator) {
        this.communicator = communicator;
    }

    @Override
    public int rank() {
        return communicator.rank();
    }

    @Override
    public int worldSize() {
        return communicator.size();
    }

    @Override
    public void sumInPlace(FloatBuffer buffer) {
        communicator.allReduce(buffer, ReduceOp.SUM);
    }

    @Override
    public void broadcastFromRank0(FloatBuffer buffer) {
        communicator.broadcast(buffer, 0);
    }

    public Communicator communicator() {
        return communicator;
    }

    @Override
    public void close() {
        communicator.close();
    }
}
