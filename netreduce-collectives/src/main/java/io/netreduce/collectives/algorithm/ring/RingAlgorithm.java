package io.netreduce.collectives.algorithm.ring;

import io.netreduce.collectives.CommunicatorConfig;
import io.netreduce.collectives.ReduceOp;
import io.netreduce.collectives.algorithm.CollectiveAlgorithm;
import io.netreduce.collectives.algorithm.ElementType;
import io.netreduce.collectives.algorithm.GroupContext;
import io.netreduce.collectives.algorithm.ProgressGuard;
import io.netreduce.collectives.algorithm.RingConnections;
import io.netreduce.collectives.algorithm.ScratchTensor;
import io.netreduce.collectives.algorithm.SumCollectives;
import io.netreduce.collectives.algorithm.TensorMemory;
import io.netreduce.collectives.algorithm.Traffic;
import io.netreduce.verbs.TransportCapabilities;
import java.nio.FloatBuffer;

/**
 * The pipelined ring ({@link RingAllReduce}): reduce-scatter then all-gather between
 * neighbours, summed on the hosts, over any transport's RC queue pairs, with no switch.
 * Reduce-scatter and all-gather run their half of the ring alone; broadcast is a sum
 * ({@link SumCollectives}).
 */
public final class RingAlgorithm implements CollectiveAlgorithm {
    public static final String NAME = CommunicatorConfig.RING;

    private GroupContext group;
    private RingConnections connections;
    private RingAllReduce ring;
    private final ScratchTensor scratch = new ScratchTensor();

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public String unsupported(ReduceOp op, ElementType type, TransportCapabilities transport) {
        return type == ElementType.FLOAT32 ? null : "the ring reduces float32 tensors only, not " + type;
    }

    @Override
    public void join(GroupContext g) {
        group = g;
        var c = g.config();
        connections = RingConnections.open(g, null, c.ringWindow());
        try {
            connections.publishEndpoints(g);
            connections.connect(g);
            ring = new RingAllReduce(connections.pd, connections.toNext, connections.fromPrev, connections.cq, g.rank(),
                    g.size(), c.ringMessageBytes(), c.ringWindow(), g.timeout());
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    @Override
    public void allReduce(FloatBuffer input, FloatBuffer output, ReduceOp op, ProgressGuard guard) {
        int n = output.remaining();
        if (n == 0) {
            return;
        }
        TensorMemory tensors = connections.memory;
        tensors.bind(input, output, true);
        ring.run(tensors.inputRegion(), tensors.inputOffset(), tensors.outputRegion(), tensors.outputOffset(), n, op,
                guard);
        tensors.unstageWhole();
    }

    /**
     * The reduce-scatter half alone, into a registered scratch tensor whose chunk {@code rank}
     * then holds the result; only that chunk is copied out.
     */
    @Override
    public void reduceScatter(FloatBuffer input, FloatBuffer output, ReduceOp op, ProgressGuard guard) {
        int m = output.remaining();
        int n = input.remaining();
        if (m == 0) {
            return;
        }
        TensorMemory tensors = connections.memory;
        FloatBuffer all = scratch.take(n);
        tensors.bind(input, all, true);
        ring.reduceScatter(tensors.inputRegion(), tensors.inputOffset(), tensors.outputRegion(),
                tensors.outputOffset(), n, op, guard);
        output.put(output.position(), all, group.rank() * m, m);
    }

    /** The all-gather half alone, from this rank's own chunk, placed first. */
    @Override
    public void allGather(FloatBuffer input, FloatBuffer output, ProgressGuard guard) {
        int m = input.remaining();
        output.put(output.position() + group.rank() * m, input, input.position(), m);
        if (output.remaining() == 0) {
            return;
        }
        TensorMemory tensors = connections.memory;
        tensors.bind(output, output, true);
        ring.gather(tensors.outputRegion(), tensors.outputOffset(), output.remaining(), guard);
        tensors.unstageWhole();
    }

    @Override
    public void broadcast(FloatBuffer tensor, int root, ProgressGuard guard) {
        SumCollectives.broadcast(this, group.rank(), tensor, root, guard);
    }

    @Override
    public Traffic traffic() {
        return connections == null ? Traffic.NONE : connections.traffic(ring == null ? 0 : ring.waitNanos());
    }

    @Override
    public void close() {
        if (ring != null) {
            ring.close();
            ring = null;
        }
        if (connections != null) {
            connections.close();
            connections = null;
        }
    }
}
