package io.netreduce.sim.topology;

/**
 * The simulated cluster: {@code machines} machines of {@code gpusPerMachine} GPUs, one NIC per
 * machine, a fabric of top-of-rack (leaf) switches under one logical spine, and the NetReduce
 * host/switch parameters. Bandwidths are bytes per second, latencies seconds.
 *
 * @param machines             machines in the job (≥ 1)
 * @param gpusPerMachine       GPUs per machine (≥ 1)
 * @param intraBandwidth       per-GPU send and receive bandwidth inside a machine (PCIe 3.0 x16 ≈ 15.75e9,
 *                             NVLink ≈ 100e9–150e9); every GPU has its own egress and ingress port into
 *                             a non-blocking intra-machine fabric
 * @param intraLatency         one GPU-to-GPU hop inside a machine
 * @param nicBandwidth         one NIC per machine, each direction (100 Gbit/s = 12.5e9)
 * @param hopLatency           per network hop (machine→switch, switch→switch, switch→machine, and each
 *                             hop of the detour through an attached aggregator)
 * @param machinesPerLeaf      machines under one top-of-rack switch; a job with more machines spans
 *                             {@code machines / machinesPerLeaf} leaves joined by a spine
 * @param leafOversubscription leaf uplink capacity is {@code machinesPerLeaf × nicBandwidth / this}
 * @param aggregatorBandwidth  bytes/s one aggregating switch can take in (and send out); +Infinity models
 *                             aggregation at line rate on every port, a finite value models an attached
 *                             box such as the paper's FPGA (6 × 100 Gbit/s = 75e9)
 * @param aggregatorDetourHops extra network hops a NetReduce flow takes through the aggregator at each
 *                             aggregating switch (2 for an FPGA hanging off the switch, 0 for in-ASIC)
 * @param windowMessages       NetReduce message-level sliding window N (messages in flight per ring)
 * @param messageBytes         NetReduce message size (the prototype: 170 packets of 1 KiB)
 * @param pipelineChunkBytes   chunk size of the pipelined intra-machine reduce and broadcast chains
 *                             used by the hierarchical algorithms
 */
public record ClusterSpec(
        int machines,
        int gpusPerMachine,
        double intraBandwidth,
        double intraLatency,
        double nicBandwidth,
        double hopLatency,
        int machinesPerLeaf,
        double leafOversubscription,
        double aggregatorBandwidth,
        int aggregatorDetourHops,
        int windowMessages,
        long messageBytes,
        long pipelineChunkBytes) {

    public static final double GB = 1e9;
    public static final double MICROSECOND = 1e-6;

    public ClusterSpec {
        require(machines >= 1, "machines must be >= 1, got " + machines);
        require(gpusPerMachine >= 1, "gpusPerMachine must be >= 1, got " + gpusPerMachine);
        requirePositive(intraBandwidth, "intraBandwidth");
        requireNonNegative(intraLatency, "intraLatency");
        requirePositive(nicBandwidth, "nicBandwidth");
        requireNonNegative(hopLatency, "hopLatency");
        require(machinesPerLeaf >= 1, "machinesPerLeaf must be >= 1, got " + machinesPerLeaf);
        require(machines <= machinesPerLeaf || machines % machinesPerLeaf == 0,
                "machines (" + machines + ") must fit one leaf or be a multiple of machinesPerLeaf (" + machinesPerLeaf
                        + "): the simulator exploits that every leaf looks the same");
        require(leafOversubscription >= 1 && Double.isFinite(leafOversubscription),
                "leafOversubscription must be finite and >= 1, got " + leafOversubscription);
        require(aggregatorBandwidth > 0, "aggregatorBandwidth must be > 0 (or +Infinity), got " + aggregatorBandwidth);
        require(aggregatorDetourHops >= 0, "aggregatorDetourHops must be >= 0, got " + aggregatorDetourHops);
        require(windowMessages >= 1, "windowMessages must be >= 1, got " + windowMessages);
        require(messageBytes >= 1, "messageBytes must be >= 1, got " + messageBytes);
        require(pipelineChunkBytes >= 1, "pipelineChunkBytes must be >= 1, got " + pipelineChunkBytes);
    }

    /**
     * The paper's multi-GPU testbed: 4 machines × 8 V100 with NVLink (the paper quotes ~150 GB/s),
     * one 100 GbE RoCE NIC each, one switch with an FPGA aggregator attached (2 detour hops,
     * aggregating at line rate), window N = 2 of 170 × 1 KiB messages. A hop latency of 1.5 µs makes
     * a plain RoCE round trip (4 hops) 6 µs, close to the 5.7 µs the paper measures.
     */
    public static ClusterSpec paperTestbed() {
        return new ClusterSpec(4, 8, 150 * GB, 2 * MICROSECOND, 12.5 * GB, 1.5 * MICROSECOND,
                32, 1.0, Double.POSITIVE_INFINITY, 2, 2, 170 * 1024, 1 << 20);
    }

    public int gpus() {
        return machines * gpusPerMachine;
    }

    /** Whether a job of {@code m} machines fits this fabric's symmetric layout (one leaf, or whole leaves). */
    public boolean fitsMachines(int m) {
        return m >= 1 && (m <= machinesPerLeaf || m % machinesPerLeaf == 0);
    }

    /** Leaves the job spans (1 when it fits under one top-of-rack switch). */
    public int leaves() {
        return machines <= machinesPerLeaf ? 1 : machines / machinesPerLeaf;
    }

    /** Machines under each leaf the job uses. */
    public int machinesPerUsedLeaf() {
        return machines / leaves();
    }

    /** Same cluster with {@code gpus} GPUs in total (must be a multiple of gpusPerMachine). */
    public ClusterSpec withGpus(int gpus) {
        require(gpus % gpusPerMachine == 0, "GPU count " + gpus + " is not a multiple of " + gpusPerMachine + " GPUs per machine");
        return withMachines(gpus / gpusPerMachine);
    }

    public ClusterSpec withMachines(int m) {
        return new ClusterSpec(m, gpusPerMachine, intraBandwidth, intraLatency, nicBandwidth, hopLatency, machinesPerLeaf,
                leafOversubscription, aggregatorBandwidth, aggregatorDetourHops, windowMessages, messageBytes, pipelineChunkBytes);
    }

    public ClusterSpec withGpusPerMachine(int n) {
        return new ClusterSpec(machines, n, intraBandwidth, intraLatency, nicBandwidth, hopLatency, machinesPerLeaf,
                leafOversubscription, aggregatorBandwidth, aggregatorDetourHops, windowMessages, messageBytes, pipelineChunkBytes);
    }

    public ClusterSpec withIntraBandwidth(double b) {
        return new ClusterSpec(machines, gpusPerMachine, b, intraLatency, nicBandwidth, hopLatency, machinesPerLeaf,
                leafOversubscription, aggregatorBandwidth, aggregatorDetourHops, windowMessages, messageBytes, pipelineChunkBytes);
    }

    public ClusterSpec withIntraLatency(double l) {
        return new ClusterSpec(machines, gpusPerMachine, intraBandwidth, l, nicBandwidth, hopLatency, machinesPerLeaf,
                leafOversubscription, aggregatorBandwidth, aggregatorDetourHops, windowMessages, messageBytes, pipelineChunkBytes);
    }

    public ClusterSpec withNicBandwidth(double b) {
        return new ClusterSpec(machines, gpusPerMachine, intraBandwidth, intraLatency, b, hopLatency, machinesPerLeaf,
                leafOversubscription, aggregatorBandwidth, aggregatorDetourHops, windowMessages, messageBytes, pipelineChunkBytes);
    }

    public ClusterSpec withHopLatency(double l) {
        return new ClusterSpec(machines, gpusPerMachine, intraBandwidth, intraLatency, nicBandwidth, l, machinesPerLeaf,
                leafOversubscription, aggregatorBandwidth, aggregatorDetourHops, windowMessages, messageBytes, pipelineChunkBytes);
    }

    public ClusterSpec withMachinesPerLeaf(int k) {
        return new ClusterSpec(machines, gpusPerMachine, intraBandwidth, intraLatency, nicBandwidth, hopLatency, k,
                leafOversubscription, aggregatorBandwidth, aggregatorDetourHops, windowMessages, messageBytes, pipelineChunkBytes);
    }

    public ClusterSpec withLeafOversubscription(double o) {
        return new ClusterSpec(machines, gpusPerMachine, intraBandwidth, intraLatency, nicBandwidth, hopLatency, machinesPerLeaf,
                o, aggregatorBandwidth, aggregatorDetourHops, windowMessages, messageBytes, pipelineChunkBytes);
    }

    public ClusterSpec withAggregator(double bandwidth, int detourHops) {
        return new ClusterSpec(machines, gpusPerMachine, intraBandwidth, intraLatency, nicBandwidth, hopLatency, machinesPerLeaf,
                leafOversubscription, bandwidth, detourHops, windowMessages, messageBytes, pipelineChunkBytes);
    }

    public ClusterSpec withWindow(int n, long msgBytes) {
        return new ClusterSpec(machines, gpusPerMachine, intraBandwidth, intraLatency, nicBandwidth, hopLatency, machinesPerLeaf,
                leafOversubscription, aggregatorBandwidth, aggregatorDetourHops, n, msgBytes, pipelineChunkBytes);
    }

    public ClusterSpec withPipelineChunkBytes(long c) {
        return new ClusterSpec(machines, gpusPerMachine, intraBandwidth, intraLatency, nicBandwidth, hopLatency, machinesPerLeaf,
                leafOversubscription, aggregatorBandwidth, aggregatorDetourHops, windowMessages, messageBytes, c);
    }

    private static void require(boolean ok, String message) {
        if (!ok) {
            throw new IllegalArgumentException("cluster spec: " + message);
        }
    }

    private static void requirePositive(double v, String name) {
        require(v > 0 && Double.isFinite(v), name + " must be finite and > 0, got " + v);
    }

    private static void requireNonNegative(double v, String name) {
        require(v >= 0 && Double.isFinite(v), name + " must be finite and >= 0, got " + v);
    }
}
