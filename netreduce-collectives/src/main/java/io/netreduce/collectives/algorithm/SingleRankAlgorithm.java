package io.netreduce.collectives.algorithm;

import io.netreduce.collectives.ReduceOp;
import io.netreduce.verbs.TransportCapabilities;
import java.nio.FloatBuffer;

/**
 * A world of one: every collective is this rank's own tensor, so nothing is opened and
 * nothing is sent. It answers for the algorithm that was asked for (whose name it keeps),
 * because no transport is involved that could refuse it.
 */
public final class SingleRankAlgorithm implements CollectiveAlgorithm {
    private final String name;

    public SingleRankAlgorithm(String name) {
        this.name = name;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String unsupported(ReduceOp op, ElementType type, TransportCapabilities transport) {
        return null;
    }

    @Override
    public void join(GroupContext group) {
        // nothing to set up
    }

    @Override
    public void allReduce(CollectiveCall call, FloatBuffer input, FloatBuffer output) {
        copy(input, output);
    }

    @Override
    public void reduceScatter(CollectiveCall call, FloatBuffer input, FloatBuffer output) {
        copy(input, output);
    }

    @Override
    public void allGather(CollectiveCall call, FloatBuffer input, FloatBuffer output) {
        copy(input, output);
    }

    @Override
    public void broadcast(CollectiveCall call, FloatBuffer tensor) {
        // the root's tensor is already everyone's
    }

    @Override
    public Traffic traffic() {
        return Traffic.NONE;
    }

    @Override
    public void close() {
    }

    private static void copy(FloatBuffer input, FloatBuffer output) {
        if (input != output) {
            output.put(output.position(), input, input.position(), output.remaining());
        }
    }
}
