package io.netreduce.sim.collective;

import io.netreduce.sim.engine.SimulationResult;
import io.netreduce.sim.topology.ClusterSpec;

/**
 * The simulated time of one all-reduce.
 *
 * @param algorithm the algorithm
 * @param cluster   the cluster it ran on
 * @param bytes     gradient bytes per GPU
 * @param seconds   simulated all-reduce time
 * @param engine    engine statistics (flow groups, flows represented, events)
 */
public record AllReduceResult(Algorithm algorithm, ClusterSpec cluster, double bytes, double seconds, SimulationResult engine) {

    /** nccl-tests "bus bandwidth": bytes/time × 2(P−1)/P, comparable across GPU counts. */
    public double busBandwidth() {
        long p = cluster.gpus();
        return p == 1 ? Double.POSITIVE_INFINITY : bytes / seconds * 2.0 * (p - 1) / p;
    }
}
