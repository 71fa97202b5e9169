package io.netreduce.sim.topology;

import io.netreduce.sim.engine.FlowSimulator;
import io.netreduce.sim.engine.Link;
import io.netreduce.sim.engine.Route;

import java.util.HashMap;
import java.util.Map;

/**
 * Builds the links of a {@link ClusterSpec} inside a {@link FlowSimulator} and hands out routes
 * for symmetric flow groups.
 *
 * <p><b>Link classes and roles.</b> The simulator never instantiates 65,536 GPU ports. Each
 * {@link Link} created here stands for a class of identical physical links, and a route's
 * weight on it says how many of the group's flows cross <em>one</em> instance. That is exact
 * only if every instance of the class carries the same traffic, so classes are split by
 * <em>role</em>: in a flat ring the NIC of a machine whose successor sits under the same leaf
 * and the NIC of the last machine of a leaf (whose flow crosses the spine) are different
 * classes, because their flows differ. Callers name the role; routes with the same role reuse
 * the same links, so phases that run one after another do not multiply links.
 *
 * <p>Network flows do not cross the GPUs' intra-machine ports: GPUDirect RDMA moves them
 * between GPU memory and the NIC over PCIe, which the model assumes is at least as fast as
 * the NIC.
 */
public final class ClusterNetwork {

    private final ClusterSpec spec;
    private final FlowSimulator sim;
    private final Map<String, Link> links = new HashMap<>();

    public ClusterNetwork(ClusterSpec spec, FlowSimulator sim) {
        this.spec = spec;
        this.sim = sim;
    }

    public ClusterSpec spec() {
        return spec;
    }

    /** One GPU-to-GPU hop inside a machine: the sender's egress port and the receiver's ingress port. */
    public Route intraHop(String role) {
        return Route.builder()
                .via(link("gpuOut[" + role + "]", spec.intraBandwidth(), spec.intraLatency()), 1)
                .via(link("gpuIn[" + role + "]", spec.intraBandwidth(), 0), 1)
                .build();
    }

    /**
     * A machine-to-machine hop carrying {@code flowsPerNic} of the group's flows per NIC: NIC up,
     * then (if {@code crossLeaf}) leaf uplink and spine downlink to the other leaf, then NIC down.
     */
    public Route machineHop(String role, boolean crossLeaf, int flowsPerNic) {
        Route.Builder b = Route.builder().via(nicUp(role), flowsPerNic);
        if (crossLeaf) {
            b.via(leafUp(role), flowsPerNic).via(leafDown(role), flowsPerNic);
        }
        return b.via(nicDown(role), flowsPerNic).build();
    }

    /**
     * A NetReduce flow of {@code ringsPerMachine} rings per machine: NIC up to the leaf, which
     * aggregates (through its aggregator detour); with several leaves the partial sum goes up to
     * the spine, which aggregates again, and the result comes back down and is multicast, one
     * spliced connection per ring member. Because the switch sums, each uplink carries one
     * partial-sum flow per ring, not one per machine.
     */
    public Route aggregation(String role, int ringsPerMachine) {
        int r = ringsPerMachine;
        int leaves = spec.leaves();
        int perLeaf = spec.machinesPerUsedLeaf();
        double detour = spec.aggregatorDetourHops() * spec.hopLatency();
        Route.Builder b = Route.builder().via(nicUp(role), r);
        if (leaves == 1) {
            addAggregator(b, role + ".agg", perLeaf * r, detour);
        } else {
            // Leaf aggregator: takes the machines' flows up and the spine's result down.
            addAggregator(b, role + ".leafAgg", (perLeaf + 1) * r, detour);
            b.via(leafUp(role), r);
            addAggregator(b, role + ".spineAgg", leaves * r, detour);
            b.via(leafDown(role), r);
            if (detour > 0) {
                // The result passes the leaf's aggregator again on its way down; its bandwidth is
                // already counted above, so this link only adds the detour's latency.
                b.via(link("aggDown[" + role + ".leafAgg]", Double.POSITIVE_INFINITY, detour), 1);
            }
        }
        return b.via(nicDown(role), r).build();
    }

    private void addAggregator(Route.Builder b, String role, int weight, double detourLatency) {
        boolean limited = spec.aggregatorBandwidth() != Double.POSITIVE_INFINITY;
        if (!limited && detourLatency == 0) {
            return;
        }
        b.via(link("aggIn[" + role + "]", spec.aggregatorBandwidth(), detourLatency / 2), weight);
        b.via(link("aggOut[" + role + "]", spec.aggregatorBandwidth(), detourLatency / 2), weight);
    }

    private Link nicUp(String role) {
        return link("nicUp[" + role + "]", spec.nicBandwidth(), spec.hopLatency());
    }

    private Link nicDown(String role) {
        return link("nicDown[" + role + "]", spec.nicBandwidth(), spec.hopLatency());
    }

    private Link leafUp(String role) {
        return link("leafUp[" + role + "]", leafUplinkBandwidth(), spec.hopLatency());
    }

    private Link leafDown(String role) {
        return link("spineDown[" + role + "]", leafUplinkBandwidth(), spec.hopLatency());
    }

    private double leafUplinkBandwidth() {
        return spec.machinesPerLeaf() * spec.nicBandwidth() / spec.leafOversubscription();
    }

    private Link link(String name, double capacity, double latency) {
        Link l = links.get(name);
        if (l == null) {
            l = sim.link(name, capacity, latency);
            links.put(name, l);
        }
        return l;
    }
}
