package io.netreduce.sim.collective;

import io.netreduce.sim.topology.ClusterSpec;

/**
 * Closed-form α–β costs of the schedules on an uncongested network: the test oracle. Each ring
 * or pipeline step costs its slowest flow's latency plus its bytes over its bottleneck bandwidth.
 * Written independently of the simulator, from the algorithms' textbook descriptions.
 */
final class AlphaBeta {

    private AlphaBeta() {
    }

    static double flatRing(ClusterSpec c, double bytes) {
        long p = c.gpus();
        double chunk = bytes / p;
        double step = c.intraLatency() + chunk / c.intraBandwidth();
        if (c.machines() > 1) {
            step = Math.max(step, machineStep(c, chunk));
        }
        return 2 * (p - 1) * step;
    }

    static double hierarchical(ClusterSpec c, double bytes) {
        int m = c.machines();
        double ring = m == 1 ? 0 : 2 * (m - 1) * machineStep(c, bytes / m);
        return 2 * chain(c, bytes) + ring;
    }

    static double netReduce(ClusterSpec c, double bytes) {
        return 2 * chain(c, bytes) + netReducePhase(c, bytes, 1);
    }

    static double parallelNetReduce(ClusterSpec c, double bytes) {
        int n = c.gpusPerMachine();
        double intraRing = (n - 1) * (c.intraLatency() + bytes / n / c.intraBandwidth());
        return 2 * intraRing + netReducePhase(c, bytes / n, n);
    }

    /** One machine-to-machine ring step: the spine-crossing flow if the ring spans leaves. */
    private static double machineStep(ClusterSpec c, double chunk) {
        double local = 2 * c.hopLatency() + chunk / c.nicBandwidth();
        if (c.leaves() == 1) {
            return local;
        }
        double uplink = c.machinesPerLeaf() * c.nicBandwidth() / c.leafOversubscription();
        return Math.max(local, 4 * c.hopLatency() + chunk / Math.min(c.nicBandwidth(), uplink));
    }

    /** Pipelined chain over n GPUs: K + n − 2 steps of one chunk. */
    static double chain(ClusterSpec c, double bytes) {
        int n = c.gpusPerMachine();
        if (n == 1) {
            return 0;
        }
        long k = Math.max(1, (long) Math.ceil(bytes / c.pipelineChunkBytes()));
        return (k + n - 2) * (c.intraLatency() + bytes / k / c.intraBandwidth());
    }

    /**
     * r rings per NIC, each sending b bytes in messages of m: each ring gets B/r. Messages go back to
     * back unless the window runs dry: message i+N waits for message i's result, one route latency L
     * after it was sent. Message q·N + j (all full size) then starts at q·max(N·t, t + L) + j·t.
     */
    static double netReducePhase(ClusterSpec c, double bytesPerRing, int rings) {
        if (c.machines() == 1) {
            return 0;
        }
        double rate = c.nicBandwidth() / rings;
        double latency = netReduceLatency(c);
        long count = (long) Math.ceil(bytesPerRing / c.messageBytes());
        if (count * c.messageBytes() != (long) bytesPerRing) {
            throw new IllegalArgumentException("oracle assumes whole messages");
        }
        double t = c.messageBytes() / rate;
        int window = c.windowMessages();
        long q = (count - 1) / window;
        long j = (count - 1) % window;
        double round = Math.max(window * t, t + latency);
        return q * round + j * t + t + latency;
    }

    static double netReduceLatency(ClusterSpec c) {
        double a = c.hopLatency();
        double d = c.aggregatorDetourHops() * a;
        return c.leaves() == 1 ? 2 * a + d : 4 * a + 3 * d;
    }
}
