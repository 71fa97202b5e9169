package io.netreduce.sim.collective;

import io.netreduce.sim.engine.FlowSimulator;
import io.netreduce.sim.engine.SimulationResult;
import io.netreduce.sim.topology.ClusterNetwork;
import io.netreduce.sim.topology.ClusterSpec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Simulates one all-reduce of a given size with a given algorithm on a given cluster. */
public final class AllReduceSimulator {

    private static final Logger LOG = LoggerFactory.getLogger(AllReduceSimulator.class);

    private AllReduceSimulator() {
    }

    public static AllReduceResult simulate(ClusterSpec cluster, Algorithm algorithm, double bytes) {
        if (!(bytes >= 0) || Double.isInfinite(bytes)) {
            throw new IllegalArgumentException("all-reduce size must be finite and >= 0 bytes, got " + bytes);
        }
        FlowSimulator sim = new FlowSimulator();
        new ScheduleBuilder(sim, new ClusterNetwork(cluster, sim)).allReduce(algorithm, bytes);
        SimulationResult r = sim.run();
        LOG.trace("{} on {} GPUs, {} bytes: {} s ({} groups for {} flows, {} events)",
                algorithm.displayName(), cluster.gpus(), bytes, r.makespan(), r.transfers(), r.flows(), r.events());
        return new AllReduceResult(algorithm, cluster, bytes, r.makespan(), r);
    }
}
