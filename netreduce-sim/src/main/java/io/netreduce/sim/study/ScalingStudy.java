package io.netreduce.sim.study;

import io.netreduce.sim.collective.Algorithm;
import io.netreduce.sim.collective.AllReduceResult;
import io.netreduce.sim.collective.AllReduceSimulator;
import io.netreduce.sim.model.DefaultWorkloads;
import io.netreduce.sim.model.Workload;
import io.netreduce.sim.topology.ClusterSpec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static io.netreduce.sim.study.Format.megabytes;
import static io.netreduce.sim.study.Format.ms;
import static io.netreduce.sim.study.Format.num;
import static io.netreduce.sim.study.Format.percent;

/**
 * The scaling study of the paper, re-run on the simulator: all-reduce time against GPU count,
 * intra-machine bandwidth, per-hop latency and NetReduce window; per-model iteration times;
 * and a comparison with the figures the paper reports.
 */
public final class ScalingStudy {

    private static final Logger LOG = LoggerFactory.getLogger(ScalingStudy.class);
    private static final String FPGA_SERIES = "Parallel NetReduce, aggregator limited to ";

    private ScalingStudy() {
    }

    public static StudyResult run(StudyConfig cfg) {
        Map<String, Table> tables = new LinkedHashMap<>();
        List<StudyResult.PlotSpec> plots = new ArrayList<>();
        double[] largest = new double[2];
        gpuSweep(cfg, tables, plots, largest);
        intraBandwidthSweep(cfg, tables, plots);
        hopLatencySweep(cfg, tables, plots);
        windowSweep(cfg, tables, plots);
        ModelResults models = models(cfg, tables);
        tables.put("paper_comparison", paperComparison(cfg, models));
        return new StudyResult(tables, plots, (int) largest[0], largest[1]);
    }

    private static void gpuSweep(StudyConfig cfg, Map<String, Table> tables, List<StudyResult.PlotSpec> plots, double[] largest) {
        Table t = new Table("gpus", "machines", "algorithm", "allreduce_ms", "bus_bandwidth_GBps", "flow_groups", "flows", "events", "wall_ms");
        Map<String, List<double[]>> points = new LinkedHashMap<>();
        for (int p : cfg.gpuCounts()) {
            ClusterSpec c = cfg.testbed().withGpus(p);
            long start = System.nanoTime();
            for (Algorithm a : Algorithm.values()) {
                row(t, points, a.displayName(), a.id(), c, a, cfg.sweepBytes());
            }
            double wall = (System.nanoTime() - start) / 1e9;
            if (p >= largest[0]) {
                largest[0] = p;
                largest[1] = wall;
            }
            ClusterSpec limited = c.withAggregator(cfg.aggregatorBandwidth(), c.aggregatorDetourHops());
            row(t, points, FPGA_SERIES + num("%.0f", cfg.aggregatorBandwidth() / 1e9) + " GB/s per switch", "parallel-netreduce-aggregator-" + num("%.0f", cfg.aggregatorBandwidth() / 1e9) + "GBps",
                    limited, Algorithm.PARALLEL_NETREDUCE, cfg.sweepBytes());
            LOG.trace("simulated {} GPUs ({} machines) in {} s", p, c.machines(), num("%.3f", wall));
        }
        tables.put("allreduce_vs_gpus", t);
        plots.add(new StudyResult.PlotSpec("allreduce_vs_gpus",
                "All-reduce time vs GPUs (" + cfg.sweepLabel() + ")",
                "GPUs", "all-reduce time (ms)", true, true, series(points)));
    }

    private static void row(Table t, Map<String, List<double[]>> points, String series, String id, ClusterSpec c, Algorithm a, double bytes) {
        long start = System.nanoTime();
        AllReduceResult r = AllReduceSimulator.simulate(c, a, bytes);
        double wall = (System.nanoTime() - start) / 1e6;
        t.add(c.gpus(), c.machines(), id, ms(r.seconds()), num("%.2f", r.busBandwidth() / 1e9), r.engine().transfers(),
                r.engine().flows(), r.engine().events(), num("%.1f", wall));
        points.computeIfAbsent(series, k -> new ArrayList<>()).add(new double[]{c.gpus(), r.seconds() * 1e3});
    }

    private static void intraBandwidthSweep(StudyConfig cfg, Map<String, Table> tables, List<StudyResult.PlotSpec> plots) {
        Table t = new Table("gpus", "intra_GBps", "algorithm", "allreduce_ms");
        Map<String, List<double[]>> points = new LinkedHashMap<>();
        Map<String, List<double[]>> ratio = new LinkedHashMap<>();
        int n = cfg.testbed().gpusPerMachine();
        int[] machineCounts = {2, cfg.testbed().machines(), 16, 128};
        for (int m : machineCounts) {
            if (!cfg.testbed().fitsMachines(m)) {
                continue;
            }
            for (double b : cfg.intraBandwidths()) {
                ClusterSpec c = cfg.testbed().withMachines(m).withIntraBandwidth(b);
                Map<Algorithm, Double> times = new EnumMap<>(Algorithm.class);
                for (Algorithm a : Algorithm.values()) {
                    double s = AllReduceSimulator.simulate(c, a, cfg.sweepBytes()).seconds();
                    times.put(a, s);
                    t.add(c.gpus(), num("%.2f", b / 1e9), a.id(), ms(s));
                    if (m == cfg.testbed().machines()) {
                        points.computeIfAbsent(a.displayName(), k -> new ArrayList<>()).add(new double[]{b / 1e9, s * 1e3});
                    }
                }
                ratio.computeIfAbsent(m + " x " + n + " GPUs", k -> new ArrayList<>())
                        .add(new double[]{b / 1e9, times.get(Algorithm.HIERARCHICAL) / times.get(Algorithm.PARALLEL_NETREDUCE)});
            }
        }
        tables.put("allreduce_vs_intra_bandwidth", t);
        plots.add(new StudyResult.PlotSpec("allreduce_vs_intra_bandwidth",
                "All-reduce time vs intra-machine bandwidth (" + cfg.testbed().machines() + " x " + n + " GPUs)",
                "intra-machine bandwidth per GPU (GB/s)", "all-reduce time (ms)", true, true, series(points)));
        plots.add(new StudyResult.PlotSpec("hierarchical_over_parallel_netreduce",
                "Hierarchical / Parallel NetReduce all-reduce time (> 1: Parallel NetReduce faster)",
                "intra-machine bandwidth per GPU (GB/s)", "time ratio", true, false, series(ratio)));
    }

    private static void hopLatencySweep(StudyConfig cfg, Map<String, Table> tables, List<StudyResult.PlotSpec> plots) {
        Table t = new Table("gpus", "hop_latency_us", "algorithm", "allreduce_ms");
        Map<String, List<double[]>> points = new LinkedHashMap<>();
        for (int m : new int[]{cfg.testbed().machines(), 128}) {
            if (!cfg.testbed().fitsMachines(m)) {
                continue;
            }
            int p = m * cfg.testbed().gpusPerMachine();
            for (double l : cfg.hopLatencies()) {
                ClusterSpec c = cfg.testbed().withMachines(m).withHopLatency(l);
                for (Algorithm a : Algorithm.values()) {
                    double s = AllReduceSimulator.simulate(c, a, cfg.sweepBytes()).seconds();
                    t.add(p, num("%.1f", l * 1e6), a.id(), ms(s));
                    if (p == cfg.testbed().gpus()) {
                        points.computeIfAbsent(a.displayName(), k -> new ArrayList<>()).add(new double[]{l * 1e6, s * 1e3});
                    }
                }
            }
        }
        tables.put("allreduce_vs_hop_latency", t);
        plots.add(new StudyResult.PlotSpec("allreduce_vs_hop_latency",
                "All-reduce time vs per-hop latency (" + cfg.testbed().gpus() + " GPUs, window N = " + cfg.testbed().windowMessages()
                        + " x " + cfg.testbed().messageBytes() / 1024 + " KiB)",
                "per-hop latency (us)", "all-reduce time (ms)", true, true, series(points)));
    }

    private static void windowSweep(StudyConfig cfg, Map<String, Table> tables, List<StudyResult.PlotSpec> plots) {
        Table t = new Table("gpus", "window_messages", "message_bytes", "hop_latency_us", "algorithm", "allreduce_ms");
        Map<String, List<double[]>> points = new LinkedHashMap<>();
        ClusterSpec base = cfg.testbed();
        // The window's reach is N × message size: sweep both, plot N at the configured size.
        long[] messageSizes = {base.messageBytes() / 2, base.messageBytes(), base.messageBytes() * 4};
        for (long size : messageSizes) {
            for (int w : cfg.windows()) {
                for (double l : cfg.hopLatencies()) {
                    ClusterSpec c = base.withWindow(w, size).withHopLatency(l);
                    for (Algorithm a : new Algorithm[]{Algorithm.NETREDUCE, Algorithm.PARALLEL_NETREDUCE}) {
                        double s = AllReduceSimulator.simulate(c, a, cfg.sweepBytes()).seconds();
                        t.add(c.gpus(), w, size, num("%.1f", l * 1e6), a.id(), ms(s));
                        if (a == Algorithm.PARALLEL_NETREDUCE && size == base.messageBytes()) {
                            points.computeIfAbsent("N = " + w, k -> new ArrayList<>()).add(new double[]{l * 1e6, s * 1e3});
                        }
                    }
                }
            }
        }
        List<double[]> hier = new ArrayList<>();
        for (double l : cfg.hopLatencies()) {
            hier.add(new double[]{l * 1e6, AllReduceSimulator.simulate(base.withHopLatency(l), Algorithm.HIERARCHICAL, cfg.sweepBytes()).seconds() * 1e3});
        }
        points.put("Hierarchical (reference)", hier);
        tables.put("netreduce_window", t);
        plots.add(new StudyResult.PlotSpec("netreduce_window",
                "Parallel NetReduce: window N vs per-hop latency (" + base.gpus() + " GPUs, " + base.messageBytes() / 1024 + " KiB messages)",
                "per-hop latency (us)", "all-reduce time (ms)", true, true, series(points)));
    }

    /** Per model and algorithm on the testbed: all-reduce and iteration times. */
    record ModelResults(List<Workload> workloads, Map<String, Map<Algorithm, Double>> allReduce) {
    }

    private static ModelResults models(StudyConfig cfg, Map<String, Table> tables) {
        List<Workload> workloads = DefaultWorkloads.all(cfg.sustainedFlops());
        Table t = new Table("model", "parameters", "gradient_MB", "batch_per_gpu", "compute_ms", "algorithm",
                "allreduce_ms", "iteration_ms", "iteration_overlap_ms", "comm_share_pct");
        Table summary = new Table("model", "grad MB", "compute ms", "flat ms", "hier ms", "NR ms", "PNR ms",
                "PNR vs flat %", "PNR vs hier %", "overlap: vs flat %", "overlap: vs hier %");
        Map<String, Map<Algorithm, Double>> all = new LinkedHashMap<>();
        for (Workload w : workloads) {
            Map<Algorithm, Double> times = new EnumMap<>(Algorithm.class);
            for (Algorithm a : Algorithm.values()) {
                double s = AllReduceSimulator.simulate(cfg.testbed(), a, w.gradientBytes()).seconds();
                times.put(a, s);
                t.add(w.architecture().name(), w.architecture().parameters(), megabytes(w.gradientBytes()), w.batchPerGpu(),
                        ms(w.computeSeconds()), a.id(), ms(s), ms(w.iterationSeconds(s)), ms(w.overlappedIterationSeconds(s)),
                        percent(s / w.iterationSeconds(s)));
            }
            all.put(w.architecture().name(), times);
            summary.add(w.architecture().name(), megabytes(w.gradientBytes()), ms(w.computeSeconds()),
                    ms(times.get(Algorithm.FLAT_RING)), ms(times.get(Algorithm.HIERARCHICAL)),
                    ms(times.get(Algorithm.NETREDUCE)), ms(times.get(Algorithm.PARALLEL_NETREDUCE)),
                    percent(gain(w, times, Algorithm.FLAT_RING, false)), percent(gain(w, times, Algorithm.HIERARCHICAL, false)),
                    percent(gain(w, times, Algorithm.FLAT_RING, true)), percent(gain(w, times, Algorithm.HIERARCHICAL, true)));
        }
        tables.put("models", t);
        tables.put("models_summary", summary);
        return new ModelResults(workloads, all);
    }

    /** Training throughput gain of Parallel NetReduce over {@code baseline}: T_baseline / T_pnr − 1. */
    static double gain(Workload w, Map<Algorithm, Double> times, Algorithm baseline, boolean overlap) {
        double base = overlap ? w.overlappedIterationSeconds(times.get(baseline)) : w.iterationSeconds(times.get(baseline));
        double pnr = times.get(Algorithm.PARALLEL_NETREDUCE);
        double ours = overlap ? w.overlappedIterationSeconds(pnr) : w.iterationSeconds(pnr);
        return base / ours - 1;
    }

    private static Table paperComparison(StudyConfig cfg, ModelResults r) {
        Table t = new Table("claim (paper, 4 x 8 V100, NVLink, 100 GbE)", "paper", "simulated", "note");
        double maxFlat = 0;
        double maxFlatOverlap = 0;
        String maxFlatModel = "";
        double minHier = Double.POSITIVE_INFINITY;
        double maxHier = 0;
        Workload alexnet = null;
        Workload resnet = null;
        for (Workload w : r.workloads()) {
            Map<Algorithm, Double> times = r.allReduce().get(w.architecture().name());
            double g = gain(w, times, Algorithm.FLAT_RING, false);
            if (g > maxFlat) {
                maxFlat = g;
                maxFlatModel = w.architecture().name();
            }
            maxFlatOverlap = Math.max(maxFlatOverlap, gain(w, times, Algorithm.FLAT_RING, true));
            double h = gain(w, times, Algorithm.HIERARCHICAL, false);
            minHier = Math.min(minHier, h);
            maxHier = Math.max(maxHier, h);
            if (w.architecture().name().equals("AlexNet")) {
                alexnet = w;
            }
            if (w.architecture().name().equals("ResNet50")) {
                resnet = w;
            }
        }
        double commSpeedupFlat = commRatio(r, "AlexNet", Algorithm.FLAT_RING);
        double commSpeedupHier = commRatio(r, "AlexNet", Algorithm.HIERARCHICAL);
        t.add("Parallel NetReduce faster than Flat Ring (training)", "up to 68.8 %",
                percent(maxFlat) + " % (" + maxFlatModel + "); " + percent(maxFlatOverlap) + " % with ideal overlap",
                "all-reduce alone is " + percent(commSpeedupFlat - 1) + " % faster: the gain tends to it as a model becomes network-bound");
        t.add("Parallel NetReduce faster than hierarchical (training)", "12.3-57.9 %",
                percent(minHier) + "-" + percent(maxHier) + " %",
                "all-reduce alone is " + percent(commSpeedupHier - 1) + " % faster; the range spans the models' communication shares");
        if (alexnet != null) {
            double flat = r.allReduce().get("AlexNet").get(Algorithm.FLAT_RING);
            double implied = flat * (1 - 0.777) / 0.777;
            t.add("AlexNet time share in communication (Flat Ring)", "77.7 %", percent(flat / alexnet.iterationSeconds(flat)) + " %",
                    "77.7 % needs " + ms(implied) + " ms of compute per iteration against our " + ms(alexnet.computeSeconds())
                            + " ms (batch " + alexnet.batchPerGpu() + "): compute is an input, see docs/simulation.md");
        }
        if (resnet != null) {
            Map<Algorithm, Double> times = r.allReduce().get("ResNet50");
            double flat = times.get(Algorithm.FLAT_RING);
            t.add("ResNet50 time share in communication (Flat Ring)", "25.8 %", percent(flat / resnet.iterationSeconds(flat)) + " %",
                    "compute " + ms(resnet.computeSeconds()) + " ms per iteration (batch " + resnet.batchPerGpu() + ")");
            t.add("ResNet50 training gain", "6.9-15.1 %",
                    percent(gain(resnet, times, Algorithm.HIERARCHICAL, false)) + " % vs hierarchical, "
                            + percent(gain(resnet, times, Algorithm.FLAT_RING, false)) + " % vs flat ring",
                    "gain is bounded by the communication share: compute-bound models gain little");
        }
        ClusterSpec oneSwitch = cfg.testbed().withMachinesPerLeaf(1 << 20);
        double at32 = AllReduceSimulator.simulate(oneSwitch.withMachines(4), Algorithm.PARALLEL_NETREDUCE, cfg.sweepBytes()).seconds();
        double at1024 = AllReduceSimulator.simulate(oneSwitch.withMachines(128), Algorithm.PARALLEL_NETREDUCE, cfg.sweepBytes()).seconds();
        double ring32 = AllReduceSimulator.simulate(oneSwitch.withMachines(4), Algorithm.FLAT_RING, cfg.sweepBytes()).seconds();
        double ring1024 = AllReduceSimulator.simulate(oneSwitch.withMachines(128), Algorithm.FLAT_RING, cfg.sweepBytes()).seconds();
        int n = cfg.testbed().gpusPerMachine();
        t.add("NetReduce all-reduce time flat from " + 4 * n + " to " + 128 * n + " GPUs (simulation)", "flat",
                "x" + num("%.3f", at1024 / at32) + " (Flat Ring x" + num("%.2f", ring1024 / ring32) + ")",
                "one switch, " + cfg.sweepLabel() + "; a spine tier adds only hop latency");
        return t;
    }

    private static double commRatio(ModelResults r, String model, Algorithm baseline) {
        Map<Algorithm, Double> times = r.allReduce().get(model);
        return times == null ? Double.NaN : times.get(baseline) / times.get(Algorithm.PARALLEL_NETREDUCE);
    }

    private static List<Plots.Series> series(Map<String, List<double[]>> points) {
        List<Plots.Series> out = new ArrayList<>();
        Plots.collect(points).forEach((name, xy) -> out.add(new Plots.Series(name, xy[0], xy[1])));
        return out;
    }

    /** One-line description of a cluster for titles and headers. */
    public static String describe(ClusterSpec c) {
        return c.gpusPerMachine() + " GPUs/machine, " + num("%.0f", c.intraBandwidth() / 1e9) + " GB/s intra, "
                + num("%.0f", c.nicBandwidth() * 8 / 1e9) + " Gbit/s NIC";
    }
}
