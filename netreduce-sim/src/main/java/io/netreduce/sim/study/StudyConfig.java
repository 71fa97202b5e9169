package io.netreduce.sim.study;

import io.netreduce.sim.model.DefaultWorkloads;
import io.netreduce.sim.model.ModelZoo;
import io.netreduce.sim.topology.ClusterSpec;

import java.util.ArrayList;
import java.util.List;

/**
 * What the scaling study sweeps.
 *
 * @param testbed           the base cluster (the paper's 4 × 8 V100 by default); sweeps vary one knob of it
 * @param sweepBytes        all-reduce size for the sweeps (bytes per GPU)
 * @param sweepLabel        what that size is, for titles
 * @param gpuCounts         GPU counts of the scaling sweep
 * @param intraBandwidths   intra-machine bandwidths (bytes/s) of the intra-bandwidth sweep
 * @param hopLatencies      per-hop latencies (s) of the latency and window sweeps
 * @param windows           NetReduce windows N of the window sweep
 * @param aggregatorBandwidth bandwidth of the limited-aggregator variant in the scaling sweep
 * @param sustainedFlops    GPU throughput behind the models' compute times
 */
public record StudyConfig(ClusterSpec testbed, double sweepBytes, String sweepLabel, List<Integer> gpuCounts,
                          double[] intraBandwidths, double[] hopLatencies, int[] windows,
                          double aggregatorBandwidth, double sustainedFlops) {

    public StudyConfig {
        if (gpuCounts.isEmpty()) {
            throw new IllegalArgumentException("study needs at least one GPU count");
        }
        for (int p : gpuCounts) {
            if (p < 1 || p % testbed.gpusPerMachine() != 0) {
                throw new IllegalArgumentException("GPU count " + p + " is not a positive multiple of "
                        + testbed.gpusPerMachine() + " GPUs per machine");
            }
        }
    }

    public static StudyConfig defaults() {
        return defaults(ClusterSpec.paperTestbed(), 65536);
    }

    /** The default sweeps on {@code testbed}, scaling from 4 machines in powers of two up to {@code maxGpus} GPUs. */
    public static StudyConfig defaults(ClusterSpec testbed, int maxGpus) {
        List<Integer> counts = new ArrayList<>();
        int n = testbed.gpusPerMachine();
        // 4, 8, 16, ... machines: 32 ... 65,536 GPUs with the paper's 8 GPUs per machine.
        for (long m = 4; m * n <= maxGpus; m *= 2) {
            if (testbed.fitsMachines((int) m)) {
                counts.add((int) (m * n));
            }
        }
        if (counts.isEmpty()) {
            throw new IllegalArgumentException("no GPU count up to " + maxGpus + " fits: the sweep starts at 4 machines of "
                    + n + " GPUs and needs machine counts that fill whole leaves of " + testbed.machinesPerLeaf());
        }
        double resnet = ModelZoo.resNet50().gradientBytes(4);
        return new StudyConfig(testbed, resnet, "ResNet50 gradient, " + Format.megabytes(resnet) + " MB", counts,
                new double[]{4e9, 8e9, 15.75e9, 31.5e9, 50e9, 75e9, 100e9, 150e9, 300e9},
                new double[]{0.1e-6, 0.2e-6, 0.5e-6, 1e-6, 2e-6, 5e-6, 10e-6, 20e-6, 50e-6, 100e-6},
                new int[]{1, 2, 4, 8, 16, 32},
                75e9,
                DefaultWorkloads.V100_AMP_SUSTAINED_FLOPS);
    }
}
