package io.netreduce.collectives.algorithm.hierarchical;

import io.netreduce.collectives.ReduceOp;
import io.netreduce.collectives.algorithm.AlgorithmUnavailableException;
import io.netreduce.collectives.algorithm.CollectiveAlgorithm;
import io.netreduce.collectives.algorithm.CollectiveCall;
import io.netreduce.collectives.algorithm.ElementType;
import io.netreduce.collectives.algorithm.GroupContext;
import io.netreduce.collectives.algorithm.HostLayout;
import io.netreduce.collectives.algorithm.ScratchTensor;
import io.netreduce.collectives.algorithm.SumBuiltAlgorithm;
import io.netreduce.collectives.algorithm.Traffic;
import io.netreduce.collectives.algorithm.shm.HostCollectives;
import io.netreduce.verbs.TransportCapabilities;
import java.nio.FloatBuffer;

/**
 * For ranks that share hosts: Parallel NetReduce (the paper's multi-GPU design) when the
 * algorithm across hosts is netreduce, a hierarchical ring when it is the ring. An
 * all-reduce of N elements on hosts of n ranks runs in three parts:
 * <ol>
 *   <li>a reduce-scatter within each host through shared memory ({@link HostCollectives}):
 *       local rank l holds its host's sum of chunk l, N/n elements;</li>
 *   <li>n all-reduces across hosts at once, one per local position, each of one chunk: local
 *       rank l of every host runs its own instance of the algorithm across hosts (its own
 *       ring of connections, for netreduce its own ring on the switch), so each host puts
 *       about N elements on the wire whatever n is;</li>
 *   <li>an all-gather within each host through shared memory.</li>
 * </ol>
 * Each chunk's sum is computed once in each host, then once across hosts, and copied
 * everywhere, so every rank gets the same bits. With one host the middle part is skipped.
 * Reduce-scatter, all-gather and broadcast are built from the all-reduce
 * ({@link SumBuiltAlgorithm}); MAX and MIN go wherever the algorithm across hosts takes them.
 */
public final class HierarchicalAlgorithm extends SumBuiltAlgorithm {
    private final CollectiveAlgorithm across;
    private GroupContext group;
    private HostLayout layout;
    private HostCollectives host;
    private boolean crossesHosts;
    private final ScratchTensor chunk = new ScratchTensor();

    /** {@code across}: a new, not yet joined instance of the algorithm to run between hosts. */
    public HierarchicalAlgorithm(CollectiveAlgorithm across) {
        this.across = across;
    }

    /** "hierarchical-netreduce", "hierarchical-ring". */
    @Override
    public String name() {
        return "hierarchical-" + across.name();
    }

    /** The algorithm between hosts. */
    public CollectiveAlgorithm across() {
        return across;
    }

    @Override
    public String unsupported(ReduceOp op, ElementType type, TransportCapabilities transport) {
        if (type != ElementType.FLOAT32) {
            return "shared memory reduces float32 tensors only, not " + type;
        }
        return crossesHosts || group == null ? across.unsupported(op, type, transport) : null;
    }

    /**
     * Local ranks compare their calls through shared memory before any data moves; across
     * hosts the algorithm there compares them (when it does), and every rank's result
     * depends on both.
     */
    @Override
    public boolean comparesCallsInBand() {
        return !crossesHosts || across.comparesCallsInBand();
    }

    @Override
    public void join(GroupContext g) throws AlgorithmUnavailableException {
        group = g;
        layout = g.hosts();
        crossesHosts = layout.hosts() > 1;
        host = HostCollectives.join(g);
        if (crossesHosts) {
            try {
                across.join(g.across());
            } catch (AlgorithmUnavailableException | RuntimeException e) {
                host.close();
                host = null;
                throw e;
            }
        }
    }

    @Override
    public void allReduce(CollectiveCall call, FloatBuffer input, FloatBuffer output) {
        if (!crossesHosts) {
            host.allReduce(call, input, output);
            return;
        }
        int count = output.remaining();
        FloatBuffer mine = chunk.take(host.chunkLength(count));
        host.reduceScatter(call, input, mine);
        across.allReduce(call, mine, mine);
        host.allGather(call, mine, output);
    }

    @Override
    protected int groupRank() {
        return group.rank();
    }

    /** The wire's traffic: what the algorithm across hosts moved (shared memory moves nothing over a wire). */
    @Override
    public Traffic traffic() {
        return crossesHosts ? across.traffic() : Traffic.NONE;
    }

    @Override
    public void close() {
        if (crossesHosts) {
            across.close();
        }
        if (host != null) {
            host.close();
            host = null;
        }
    }

    /** "hierarchical-netreduce: shared memory within 2 hosts × 2 ranks, 2 netreduce rings across hosts". */
    public String describe() {
        if (layout == null) {
            return name();
        }
        if (!crossesHosts) {
            return "shared memory (" + layout + ")";
        }
        int n = layout.ranksPerHost();
        String rings = across.name().equals(io.netreduce.collectives.CommunicatorConfig.RING) ? "" : across.name() + " ";
        return name() + ": shared memory within " + layout + ", " + n + " " + rings + (n == 1 ? "ring" : "rings")
                + " across hosts";
    }

    @Override
    public String toString() {
        return describe();
    }
}
