package io.netreduce.sim.collective;

import io.netreduce.sim.topology.ClusterSpec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static io.netreduce.sim.topology.ClusterSpec.GB;
import static io.netreduce.sim.topology.ClusterSpec.MICROSECOND;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class AllReduceSimulatorTest {

    /** 100 MiB: a whole number of 170 KiB messages is not needed for the ring algorithms. */
    private static final double HUNDRED_MIB = 100.0 * (1 << 20);

    private static void assertWithin2Percent(double expected, double actual, String what) {
        double rel = Math.abs(actual - expected) / expected;
        assertTrue(rel <= 0.02, what + ": simulated " + actual + " s vs closed form " + expected + " s (" + rel * 100 + " % off)");
    }

    private static double sim(ClusterSpec c, Algorithm a, double bytes) {
        return AllReduceSimulator.simulate(c, a, bytes).seconds();
    }

    @ParameterizedTest(name = "{0} machines x {1} GPUs, {2} per leaf, hop {3} us, intra {4} GB/s")
    @CsvSource({
            "4, 8, 32, 1.5, 150",
            "4, 8, 32, 50, 15.75",
            "16, 4, 4, 1.5, 100",
            "64, 8, 16, 10, 150",
            "6, 1, 32, 1.5, 150",
            "1, 8, 32, 1.5, 150"})
    void ringAlgorithmsMatchClosedForm(int machines, int gpus, int perLeaf, double hopUs, double intraGBps) {
        ClusterSpec c = ClusterSpec.paperTestbed().withMachines(machines).withGpusPerMachine(gpus)
                .withMachinesPerLeaf(perLeaf).withHopLatency(hopUs * MICROSECOND).withIntraBandwidth(intraGBps * GB);
        assertWithin2Percent(AlphaBeta.flatRing(c, HUNDRED_MIB), sim(c, Algorithm.FLAT_RING, HUNDRED_MIB), "flat ring " + c);
        assertWithin2Percent(AlphaBeta.hierarchical(c, HUNDRED_MIB), sim(c, Algorithm.HIERARCHICAL, HUNDRED_MIB), "hierarchical " + c);
    }

    @ParameterizedTest(name = "{0} machines x {1} GPUs, {2} per leaf, hop {3} us, window {4}")
    @CsvSource({
            "4, 8, 32, 1.5, 2",     // window covers the bandwidth-delay product
            "4, 8, 32, 100, 2",     // window-limited: each round waits for results
            "128, 8, 32, 1.5, 2",   // two tiers: leaf and spine aggregate
            "128, 8, 32, 20, 4",
            "6, 1, 32, 1.5, 2",
            "6, 1, 32, 10, 1"})
    void netReduceAlgorithmsMatchClosedForm(int machines, int gpus, int perLeaf, double hopUs, int window) {
        ClusterSpec c = ClusterSpec.paperTestbed().withMachines(machines).withGpusPerMachine(gpus)
                .withMachinesPerLeaf(perLeaf).withHopLatency(hopUs * MICROSECOND).withWindow(window, 170 * 1024);
        // A whole number of messages per ring keeps the oracle simple: 8 × 170 KiB × 64.
        double bytes = 8.0 * 170 * 1024 * 64;
        assertWithin2Percent(AlphaBeta.netReduce(c, bytes), sim(c, Algorithm.NETREDUCE, bytes), "netreduce " + c);
        assertWithin2Percent(AlphaBeta.parallelNetReduce(c, bytes), sim(c, Algorithm.PARALLEL_NETREDUCE, bytes), "parallel netreduce " + c);
    }

    @Test
    void parallelNetReduceIsFlatInGpuCount() {
        ClusterSpec oneSwitch = ClusterSpec.paperTestbed().withMachinesPerLeaf(1 << 20);
        double t32 = sim(oneSwitch.withGpus(32), Algorithm.PARALLEL_NETREDUCE, HUNDRED_MIB);
        for (int p = 64; p <= 8192; p *= 2) {
            double t = sim(oneSwitch.withGpus(p), Algorithm.PARALLEL_NETREDUCE, HUNDRED_MIB);
            assertEquals(t32, t, t32 * 1e-9, "Parallel NetReduce at " + p + " GPUs under one switch");
        }
        // With a spine-leaf fabric the only change is the one-off extra tier of hops.
        ClusterSpec spineLeaf = ClusterSpec.paperTestbed();
        double t256 = sim(spineLeaf.withGpus(256), Algorithm.PARALLEL_NETREDUCE, HUNDRED_MIB);
        double t512 = sim(spineLeaf.withGpus(512), Algorithm.PARALLEL_NETREDUCE, HUNDRED_MIB);
        double t8192 = sim(spineLeaf.withGpus(8192), Algorithm.PARALLEL_NETREDUCE, HUNDRED_MIB);
        assertEquals(t32, t256, t32 * 1e-9);
        assertEquals(t512, t8192, t512 * 1e-9, "two-tier NetReduce must not grow with P");
        assertTrue(t512 - t256 < 50 * MICROSECOND, "second tier adds only hop latency: " + (t512 - t256));
    }

    @Test
    void ringLatencyTermGrowsWithGpuCount() {
        // A tiny all-reduce is all latency: the flat ring pays 2(P−1) step latencies, NetReduce a constant.
        ClusterSpec c = ClusterSpec.paperTestbed().withMachinesPerLeaf(1 << 20);
        double bytes = 4096;
        double previous = 0;
        for (int p = 32; p <= 4096; p *= 2) {
            ClusterSpec cp = c.withGpus(p);
            double ring = sim(cp, Algorithm.FLAT_RING, bytes);
            double latencyTerm = 2 * (p - 1) * 2 * c.hopLatency();
            assertTrue(ring >= latencyTerm, "ring at " + p + " GPUs: " + ring + " s < its latency term " + latencyTerm);
            assertTrue(ring > 1.9 * previous, "ring latency should about double with P: " + previous + " -> " + ring + " at P=" + p);
            previous = ring;
            double hier = sim(cp, Algorithm.HIERARCHICAL, bytes);
            assertTrue(hier >= 2 * (cp.machines() - 1) * 2 * c.hopLatency(), "hierarchical ring among masters at P=" + p);
        }
        double nr32 = sim(c.withGpus(32), Algorithm.PARALLEL_NETREDUCE, bytes);
        double nr4096 = sim(c.withGpus(4096), Algorithm.PARALLEL_NETREDUCE, bytes);
        assertEquals(nr32, nr4096, nr32 * 1e-9);
    }

    @Test
    void absurdMessageCountsAreRefusedWithAHint() {
        ClusterSpec tiny = ClusterSpec.paperTestbed().withWindow(2, 1);
        IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> AllReduceSimulator.simulate(tiny, Algorithm.NETREDUCE, 1e9));
        assertTrue(e.getMessage().contains("use larger messages"), e.getMessage());
    }

    @Test
    void limitedAggregatorBecomesTheBottleneckBeyondItsPorts() {
        // The prototype's FPGA takes six 100 Gbit/s ports: enough for 6 NICs, not for 16.
        ClusterSpec fpga = ClusterSpec.paperTestbed().withAggregator(75 * GB, 2);
        double bytes = 8.0 * 170 * 1024 * 64;
        double unlimited4 = sim(ClusterSpec.paperTestbed(), Algorithm.PARALLEL_NETREDUCE, bytes);
        assertEquals(unlimited4, sim(fpga, Algorithm.PARALLEL_NETREDUCE, bytes), unlimited4 * 1e-9);
        double t16 = sim(fpga.withMachines(16), Algorithm.PARALLEL_NETREDUCE, bytes);
        double netPhase = bytes * 16 / (75 * GB);
        assertTrue(t16 > netPhase, "16 machines through a 75 GB/s aggregator need at least " + netPhase + " s, got " + t16);
    }
}
