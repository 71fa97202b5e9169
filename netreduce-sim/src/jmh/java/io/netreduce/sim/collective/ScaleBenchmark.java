package io.netreduce.sim.collective;

import io.netreduce.sim.engine.SimulationResult;
import io.netreduce.sim.model.ModelZoo;
import io.netreduce.sim.topology.ClusterSpec;

import java.util.Locale;

/**
 * How long the simulator takes at cluster scale (a small main, not a unit test: timings on a
 * shared 2-core box are noisy). Prints, for 65,536 GPUs (8,192 machines × 8, 256 leaves), the
 * wall-clock time per algorithm for two gradient sizes, best of three after a warm-up; and, as a
 * same-run baseline, what the flow-by-flow simulation (no symmetry reduction) of a flat ring
 * costs at small GPU counts next to the grouped one.
 *
 * <pre>
 * mvn -B -q -pl netreduce-sim test-compile exec:java -Dexec.classpathScope=test \
 *     -Dexec.mainClass=io.netreduce.sim.collective.ScaleBenchmark
 * </pre>
 */
public final class ScaleBenchmark {

    private ScaleBenchmark() {
    }

    public static void main(String[] args) {
        int gpus = args.length > 0 ? Integer.parseInt(args[0]) : 65536;
        ClusterSpec cluster = ClusterSpec.paperTestbed().withGpus(gpus);
        System.out.printf(Locale.ROOT, "%d GPUs: %d machines x %d, %d leaves of %d%n", cluster.gpus(), cluster.machines(),
                cluster.gpusPerMachine(), cluster.leaves(), cluster.machinesPerUsedLeaf());
        System.out.println("gradient, algorithm, simulated ms, wall ms (best of 3), flow groups, flows represented, events");
        double total = 0;
        for (var model : new io.netreduce.sim.model.Architecture[]{ModelZoo.resNet50(), ModelZoo.gpt2Medium()}) {
            double bytes = model.gradientBytes(4);
            for (Algorithm a : Algorithm.values()) {
                AllReduceSimulator.simulate(cluster, a, bytes); // warm-up
                double best = Double.POSITIVE_INFINITY;
                AllReduceResult r = null;
                for (int i = 0; i < 3; i++) {
                    long t0 = System.nanoTime();
                    r = AllReduceSimulator.simulate(cluster, a, bytes);
                    best = Math.min(best, (System.nanoTime() - t0) / 1e6);
                }
                total += best;
                SimulationResult e = r.engine();
                System.out.printf(Locale.ROOT, "%s (%.0f MB), %s, %.3f, %.1f, %d, %d, %d%n", model.name(), bytes / 1e6,
                        a.displayName(), r.seconds() * 1e3, best, e.transfers(), e.flows(), e.events());
            }
        }
        System.out.printf(Locale.ROOT, "sum of best wall times: %.2f s%n%n", total / 1e3);

        // Baseline: every flow and every physical link simulated, GPUs forwarding as soon as they have
        // received (two dependencies per flow, no step barrier), so its simulated time is slightly lower.
        System.out.println("Flat ring, 100 MiB: flow by flow (per-GPU dependencies) vs grouped (same run)");
        System.out.println("GPUs, flows, flow-by-flow wall ms, grouped wall ms, simulated ms flow-by-flow / grouped");
        for (int p : new int[]{32, 64, 128, 256, 512}) {
            ClusterSpec c = ClusterSpec.paperTestbed().withGpus(p).withMachinesPerLeaf(1 << 20);
            long t0 = System.nanoTime();
            double expanded = ExpandedScheduleTest.flatRingExpanded(c, false);
            double expandedMs = (System.nanoTime() - t0) / 1e6;
            t0 = System.nanoTime();
            double grouped = AllReduceSimulator.simulate(c, Algorithm.FLAT_RING, 100.0 * (1 << 20)).seconds();
            double groupedMs = (System.nanoTime() - t0) / 1e6;
            System.out.printf(Locale.ROOT, "%d, %d, %.1f, %.1f, %.4f / %.4f%n", p, 2L * p * (p - 1), expandedMs, groupedMs,
                    expanded * 1e3, grouped * 1e3);
        }
    }
}
