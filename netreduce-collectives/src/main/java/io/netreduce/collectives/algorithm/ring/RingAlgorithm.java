package io.netreduce.collectives.algorithm.ring;

import io.netreduce.collectives.CommunicatorConfig;
import io.netreduce.collectives.ReduceOp;
import io.netreduce.collectives.algorithm.CollectiveAlgorithm;
import io.netreduce.collectives.algorithm.ElementType;
import io.netreduce.collectives.algorithm.GroupContext;
import io.netreduce.collectives.algorithm.MessagePlan;
import io.netreduce.collectives.algorithm.CollectiveCall;
import io.netreduce.collectives.algorithm.RingConnections;
import io.netreduce.collectives.algorithm.ScratchTensor;
import io.netreduce.collectives.algorithm.SumCollectives;
import io.netreduce.collectives.algorithm.TensorMemory;
import io.netreduce.collectives.algorithm.kernel.ReductionKernel;
import io.netreduce.collectives.algorithm.Traffic;
import io.netreduce.verbs.TransportCapabilities;
import java.nio.ByteBuffer;
import java.nio.FloatBuffer;

/**
 * The ring of RC connections between neighbours, summed on the hosts, over any transport,
 * with no switch. Two ways over it, chosen by size:
 * <ul>
 *   <li>the pipelined ring ({@link RingAllReduce}): reduce-scatter then all-gather, 2(P-1)
 *       steps of 1/P of the tensor each, the bandwidth-optimal schedule for large tensors;</li>
 *   <li>for tensors of at most {@link CommunicatorConfig#smallTensorBytes(int)}, where each
 *       step's latency is the cost: every rank's whole tensor goes around the ring (the
 *       all-gather half over P copies, P-1 steps, a single exchange at P = 2) and each rank
 *       reduces the P copies itself, {@code x_{P-1} op (... op (x_1 op x_0))}: the same
 *       expression on every rank, so the same bits; where P is a power of two from 4 (and
 *       halving-doubling is on), recursive doubling over the partner queue pairs instead,
 *       log2(P) exchanges of the whole tensor, summed as a pairwise tree in rank order
 *       ({@link PartnerAllReduce#runRecursiveDoubling});</li>
 *   <li>above that and up to {@link CommunicatorConfig#halvingDoublingBytes()}, where P is a
 *       power of two from 4, recursive halving and doubling ({@link PartnerAllReduce})
 *       over queue pairs to partners at distances 1, 2, 4, ...: 2·log2(P) steps of the
 *       ring's bytes.</li>
 * </ul>
 * Reduce-scatter and all-gather run their half of the ring alone; broadcast is a sum
 * ({@link SumCollectives}). Every message carries the caller's call and every rank checks
 * its predecessor's ({@link #comparesCallsInBand()}).
 */
public final class RingAlgorithm implements CollectiveAlgorithm {
    public static final String NAME = CommunicatorConfig.RING;

    private GroupContext group;
    private RingConnections connections;
    private RingAllReduce ring;
    private PartnerConnections partners;
    private PartnerAllReduce partnerSchedules;
    private int smallTensorBytes;
    private final ScratchTensor scratch = new ScratchTensor();
    private final ScratchTensor gathered = new ScratchTensor();
    private final ReductionKernel blockKernel = ReductionKernel.create();

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public String unsupported(ReduceOp op, ElementType type, TransportCapabilities transport) {
        return type == ElementType.FLOAT32 ? null : "the ring reduces float32 tensors only, not " + type;
    }

    @Override
    public boolean comparesCallsInBand() {
        return true;
    }

    @Override
    public void join(GroupContext g) {
        group = g;
        var c = g.config();
        smallTensorBytes = c.smallTensorBytes(g.size());
        int messageBytes = c.ringMessageBytes(g.transport());
        int lookAhead = lookAhead(g.size(), c, messageBytes);
        connections = RingConnections.open(g, null, c.ringWindow(), RingAllReduce.lookAheadSlots(lookAhead,
                c.ringWindow()));
        try {
            connections.publishEndpoints(g);
            connections.connect(g);
            ring = new RingAllReduce(connections.pd, connections.toNext, connections.fromPrev, connections.cq, g.rank(),
                    g.size(), messageBytes, c.ringWindow(), lookAhead, g.timeout());
            if (PartnerConnections.serves(g.size()) && c.halvingDoublingBytes() >= 4) {
                partners = new PartnerConnections(connections.device, connections.pd, g.size(), PartnerAllReduce.PER_OP,
                        PartnerAllReduce.SLOTS, c.mtu(), c.ackTimeout());
                partners.connect(g);
                partnerSchedules = new PartnerAllReduce(connections.pd, partners, g.rank(), g.size(),
                        c.halvingDoublingBytes() / 4, g.timeout());
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    /**
     * Receives to keep posted ahead: every message of a small-tensor all-reduce (P-1 blocks
     * of up to {@link CommunicatorConfig#smallTensorBytes(int)}), which a neighbour can send in
     * full before this rank starts the call; at least two.
     */
    static int lookAhead(int size, CommunicatorConfig c, int messageBytes) {
        int perBlock = MessagePlan.messageCount(c.smallTensorBytes(size) / 4, messageBytes);
        return Math.max(2, (size - 1) * Math.max(1, perBlock));
    }

    @Override
    public void allReduce(CollectiveCall call, FloatBuffer input, FloatBuffer output) {
        int n = output.remaining();
        boolean small = n > 0 && 4L * n <= smallTensorBytes;
        if (small && (partnerSchedules == null || n > partnerSchedules.maxRecursiveDoublingElements())) {
            gatherAndReduce(call, input, output);
            return;
        }
        TensorMemory tensors = connections.memory;
        tensors.bind(input, output, true);
        if (small) {
            partnerSchedules.runRecursiveDoubling(call, tensors.inputRegion(), tensors.inputOffset(),
                    tensors.outputRegion(), tensors.outputOffset(), n);
        } else if (partnerSchedules != null && n > 0 && n <= partnerSchedules.maxElements()) {
            partnerSchedules.run(call, tensors.inputRegion(), tensors.inputOffset(), tensors.outputRegion(),
                    tensors.outputOffset(), n);
        } else {
            ring.run(call, tensors.inputRegion(), tensors.inputOffset(), tensors.outputRegion(), tensors.outputOffset(), n);
        }
        tensors.unstageWhole();
    }

    /** The small-tensor all-reduce: gather every rank's tensor, then reduce the copies in rank order here. */
    private void gatherAndReduce(CollectiveCall call, FloatBuffer input, FloatBuffer output) {
        int n = output.remaining();
        int p = group.size();
        FloatBuffer all = gathered.take(p * n);
        all.put(group.rank() * n, input, input.position(), n);
        TensorMemory tensors = connections.memory;
        tensors.bind(all, all, true);
        ring.gather(call, tensors.outputRegion(), tensors.outputOffset(), p * n);
        ByteBuffer blocks = gathered.bytes();
        blockKernel.bind(blocks, blocks, blocks);
        ReduceOp op = call.combine();
        for (int q = 1; q < p; q++) {
            blockKernel.apply(op, q * n, 0, 0, n); // block 0 = x_q op block 0
        }
        output.put(output.position(), all, 0, n);
    }

    /**
     * The reduce-scatter half alone, into a registered scratch tensor whose chunk {@code rank}
     * then holds the result; only that chunk is copied out.
     */
    @Override
    public void reduceScatter(CollectiveCall call, FloatBuffer input, FloatBuffer output) {
        int m = output.remaining();
        int n = input.remaining();
        TensorMemory tensors = connections.memory;
        FloatBuffer all = scratch.take(n);
        tensors.bind(input, all, true);
        ring.reduceScatter(call, tensors.inputRegion(), tensors.inputOffset(), tensors.outputRegion(),
                tensors.outputOffset(), n);
        output.put(output.position(), all, group.rank() * m, m);
    }

    /** The all-gather half alone, from this rank's own chunk, placed first. */
    @Override
    public void allGather(CollectiveCall call, FloatBuffer input, FloatBuffer output) {
        int m = input.remaining();
        output.put(output.position() + group.rank() * m, input, input.position(), m);
        TensorMemory tensors = connections.memory;
        tensors.bind(output, output, true);
        ring.gather(call, tensors.outputRegion(), tensors.outputOffset(), output.remaining());
        tensors.unstageWhole();
    }

    @Override
    public void broadcast(CollectiveCall call, FloatBuffer tensor) {
        SumCollectives.broadcast(this, group.rank(), call, tensor);
    }

    @Override
    public Traffic traffic() {
        if (connections == null) {
            return Traffic.NONE;
        }
        long wait = (ring == null ? 0 : ring.waitNanos()) + (partnerSchedules == null ? 0 : partnerSchedules.waitNanos());
        Traffic t = connections.traffic(wait);
        return partners == null ? t : partners.plus(t);
    }

    @Override
    public void close() {
        if (partnerSchedules != null) {
            partnerSchedules.close();
            partnerSchedules = null;
        }
        partners = null;
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
