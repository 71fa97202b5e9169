package io.netreduce.collectives.algorithm;

import java.nio.FloatBuffer;

/**
 * An algorithm whose reduce-scatter, all-gather and broadcast are its all-reduce
 * ({@link SumCollectives}): one that can only add (a NetReduce switch) or that has no better
 * way for them yet (the hierarchical one).
 */
public abstract class SumBuiltAlgorithm implements CollectiveAlgorithm {
    private final ScratchTensor whole = new ScratchTensor();

    /** This rank's place in the group the algorithm joined. */
    protected abstract int groupRank();

    @Override
    public final void reduceScatter(CollectiveCall call, FloatBuffer input, FloatBuffer output) {
        SumCollectives.reduceScatter(this, groupRank(), call, input, output, whole);
    }

    @Override
    public final void allGather(CollectiveCall call, FloatBuffer input, FloatBuffer output) {
        SumCollectives.allGather(this, groupRank(), call, input, output);
    }

    @Override
    public final void broadcast(CollectiveCall call, FloatBuffer tensor) {
        SumCollectives.broadcast(this, groupRank(), call, tensor);
    }
}
