package io.netreduce.cli;

import io.netreduce.sim.collective.Algorithm;
import io.netreduce.sim.collective.AllReduceResult;
import io.netreduce.sim.collective.AllReduceSimulator;
import io.netreduce.sim.model.Architecture;
import io.netreduce.sim.model.DefaultWorkloads;
import io.netreduce.sim.model.ModelZoo;
import io.netreduce.sim.model.Workload;
import io.netreduce.sim.study.ScalingStudy;
import io.netreduce.sim.study.StudyConfig;
import io.netreduce.sim.study.StudyResult;
import io.netreduce.sim.study.Table;
import io.netreduce.sim.topology.ClusterSpec;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;

/**
 * {@code netreduce simulate}: runs the flow-level scaling study (Flat Ring, hierarchical,
 * NetReduce, Parallel NetReduce from 32 to 65,536 GPUs), prints the comparison with the paper
 * and writes CSV tables and PNG charts; or, with {@code --gpus}, evaluates one cluster.
 */
@Command(name = "simulate", mixinStandardHelpOptions = true,
        description = {
                "Simulate all-reduce on a cluster of multi-GPU machines (flow-level, max-min fair links).",
                "Without --gpus: the full scaling study (GPU count, intra-machine bandwidth, per-hop latency,",
                "NetReduce window, per-model iteration times, comparison with the NetReduce paper),",
                "CSV and PNG files in --out. With --gpus: one cluster, every algorithm, every model."},
        footer = {"", "Examples:",
                "  netreduce simulate                                  # the whole study into ./simulation",
                "  netreduce simulate --out docs/img --max-gpus 1024",
                "  netreduce simulate --gpus 256 --intra-gbytes 15.75   # PCIe machines, 32 of them",
                "  netreduce simulate --gpus 1024 --model BERT-large --hop-us 5 --window 4"})
public final class SimulateCommand implements Callable<Integer> {

    @Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--out", paramLabel = "DIR", defaultValue = "simulation",
            description = "Directory for CSV and PNG files (default: ${DEFAULT-VALUE}).")
    Path out;

    @Option(names = "--no-plots", description = "Write CSV files only.")
    boolean noPlots;

    @Option(names = "--max-gpus", defaultValue = "65536", description = "Largest GPU count of the scaling sweep, which doubles the machine count from 4 (default: ${DEFAULT-VALUE}).")
    int maxGpus;

    @Option(names = "--gpus", description = "Evaluate one cluster of this many GPUs instead of running the study.")
    Integer gpus;

    @Option(names = "--machines", defaultValue = "4", description = "Machines of the study's base cluster (default: ${DEFAULT-VALUE}, the paper's testbed).")
    int machines;

    @Option(names = "--gpus-per-machine", defaultValue = "8", description = "GPUs per machine (default: ${DEFAULT-VALUE}).")
    int gpusPerMachine;

    @Option(names = "--intra-gbytes", defaultValue = "150", description = "Intra-machine bandwidth per GPU in GB/s: PCIe 3.0 x16 15.75, NVLink 100-150 (default: ${DEFAULT-VALUE}).")
    double intraGBytes;

    @Option(names = "--intra-us", defaultValue = "2", description = "Latency of one GPU-to-GPU hop inside a machine, µs (default: ${DEFAULT-VALUE}).")
    double intraUs;

    @Option(names = "--nic-gbits", defaultValue = "100", description = "NIC bandwidth per machine in Gbit/s (default: ${DEFAULT-VALUE}).")
    double nicGbits;

    @Option(names = "--hop-us", defaultValue = "1.5", description = "Per-hop network latency in µs (default: ${DEFAULT-VALUE}).")
    double hopUs;

    @Option(names = "--machines-per-leaf", defaultValue = "32", description = "Machines per top-of-rack switch; larger jobs use a spine (default: ${DEFAULT-VALUE}).")
    int machinesPerLeaf;

    @Option(names = "--oversubscription", defaultValue = "1", description = "Leaf uplink oversubscription (default: ${DEFAULT-VALUE}).")
    double oversubscription;

    @Option(names = "--aggregator-gbytes", description = "Aggregation bandwidth per switch in GB/s (default: line rate on every port; the paper's FPGA: 75).")
    Double aggregatorGBytes;

    @Option(names = "--detour-hops", defaultValue = "2", description = "Extra hops through an attached aggregator per switch (default: ${DEFAULT-VALUE}; 0 for in-ASIC).")
    int detourHops;

    @Option(names = "--window", defaultValue = "2", description = "NetReduce window N in messages per ring (default: ${DEFAULT-VALUE}).")
    int window;

    @Option(names = "--message-bytes", defaultValue = "174080", description = "NetReduce message size (default: ${DEFAULT-VALUE} = 170 x 1 KiB).")
    long messageBytes;

    @Option(names = "--gpu-tflops", defaultValue = "25", description = "Sustained training TFLOP/s per GPU behind the compute times (default: ${DEFAULT-VALUE}, V100 with AMP).")
    double gpuTflops;

    @Option(names = "--model", description = "With --gpus: only this model (AlexNet, VGG16, ResNet50, BERT-base, BERT-large, GPT-2 small, GPT-2 medium).")
    String model;

    @Option(names = "--bytes", description = "With --gpus: also report one all-reduce of this many bytes per GPU.")
    Double bytes;

    public static void main(String[] args) {
        System.exit(new CommandLine(new SimulateCommand()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        PrintWriter w = spec.commandLine().getOut();
        ClusterSpec base;
        try {
            base = cluster();
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage(), e);
        }
        if (gpus != null) {
            return evaluateOne(w, base);
        }
        StudyConfig cfg;
        try {
            cfg = StudyConfig.defaults(base, maxGpus);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), "cannot run the study: " + e.getMessage(), e);
        }
        w.printf(Locale.ROOT, "Scaling study on %d x %d GPUs (%s), sweeps up to %d GPUs%n",
                base.machines(), base.gpusPerMachine(), ScalingStudy.describe(base), maxGpus);
        w.flush();
        long start = System.nanoTime();
        StudyResult result = ScalingStudy.run(cfg);
        double studySeconds = (System.nanoTime() - start) / 1e9;
        w.println();
        w.println("Comparison with the NetReduce paper");
        w.println(result.table("paper_comparison").toText());
        w.println("Per-model iteration on " + base.machines() + " x " + base.gpusPerMachine()
                + " GPUs (all-reduce times; gains are training throughput, without and with ideal overlap)");
        w.println(result.table("models_summary").toText());
        List<Path> files = result.writeTo(out, !noPlots);
        w.printf(Locale.ROOT, "Simulated %,d GPUs (all four algorithms) in %.2f s; whole study %.1f s.%n",
                result.largestGpus(), result.largestWallSeconds(), studySeconds);
        w.println("Wrote " + files.size() + " files to " + out.toAbsolutePath().normalize() + ":");
        for (Path f : files) {
            w.println("  " + f.getFileName());
        }
        w.flush();
        return 0;
    }

    private int evaluateOne(PrintWriter w, ClusterSpec base) {
        try {
            return evaluateOneChecked(w, base);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage(), e);
        }
    }

    private int evaluateOneChecked(PrintWriter w, ClusterSpec base) {
        ClusterSpec c = base.withGpus(gpus);
        List<Workload> workloads = DefaultWorkloads.all(gpuTflops * 1e12);
        if (model != null) {
            Architecture a = ModelZoo.byName(model);
            workloads = workloads.stream().filter(x -> x.architecture().name().equals(a.name())).toList();
        }
        w.printf(Locale.ROOT, "%d GPUs = %d machines x %d (%s), %d leaves%n%n", c.gpus(), c.machines(), c.gpusPerMachine(),
                ScalingStudy.describe(c), c.leaves());
        Table t = new Table("workload", "gradient MB", "compute ms", "algorithm", "all-reduce ms", "iteration ms",
                "overlapped ms", "comm share %");
        if (bytes != null) {
            for (Algorithm a : Algorithm.values()) {
                AllReduceResult r = AllReduceSimulator.simulate(c, a, bytes);
                t.add("--bytes", f("%.1f", bytes / 1e6), "-", a.displayName(), f("%.3f", r.seconds() * 1e3), "-", "-", "-");
            }
        }
        for (Workload wl : workloads) {
            for (Algorithm a : Algorithm.values()) {
                double s = AllReduceSimulator.simulate(c, a, wl.gradientBytes()).seconds();
                t.add(wl.architecture().name(), f("%.1f", wl.gradientBytes() / 1e6), f("%.2f", wl.computeSeconds() * 1e3),
                        a.displayName(), f("%.3f", s * 1e3), f("%.2f", wl.iterationSeconds(s) * 1e3),
                        f("%.2f", wl.overlappedIterationSeconds(s) * 1e3), f("%.1f", 100 * s / wl.iterationSeconds(s)));
            }
        }
        w.println(t.toText());
        w.flush();
        return 0;
    }

    private ClusterSpec cluster() {
        return new ClusterSpec(machines, gpusPerMachine, intraGBytes * 1e9, intraUs * 1e-6, nicGbits * 1e9 / 8, hopUs * 1e-6,
                machinesPerLeaf, oversubscription,
                aggregatorGBytes == null ? Double.POSITIVE_INFINITY : aggregatorGBytes * 1e9, detourHops,
                window, messageBytes, ClusterSpec.paperTestbed().pipelineChunkBytes());
    }

    private static String f(String pattern, double v) {
        return String.format(Locale.ROOT, pattern, v);
    }
}
