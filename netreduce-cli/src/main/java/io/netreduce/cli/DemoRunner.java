package io.netreduce.cli;

import io.netreduce.cli.allreduce.AlgorithmVariant;
import io.netreduce.cli.allreduce.LocalCluster;
import io.netreduce.cli.allreduce.LoopbackSubnet;
import io.netreduce.cli.allreduce.Progress;
import io.netreduce.cli.allreduce.Results;
import io.netreduce.cli.allreduce.RunChecks;
import io.netreduce.cli.allreduce.Row;
import io.netreduce.cli.allreduce.Tables;
import io.netreduce.cli.allreduce.Workload;
import io.netreduce.cli.launch.CoreBinding;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * {@code netreduce demo}: a switch in this process, P worker processes, every algorithm
 * over every size, results verified, nccl-tests-style tables and a comparison.
 */
final class DemoRunner {
    private final DemoCommand o;

    DemoRunner(DemoCommand options) {
        this.o = options;
    }

    int run() throws Exception {
        Workload workload = workload();
        PrintWriter out = o.spec.commandLine().getOut();
        Progress progress = new Progress(System.err, "demo", workload.rowsPerAlgorithm() * o.algorithms.size());
        Results results = new Results(o.ranks, progress);
        LoopbackSubnet subnet = LoopbackSubnet.pick();
        List<String> args = workerArgs(workload, subnet);
        try (DemoSwitch sw = o.algorithms.contains("netreduce") ? DemoSwitch.start(progress, subnet) : null) {
            if (sw != null) {
                args.addAll(List.of("--switch", sw.dataAddress(), "--switch-control", sw.controlUrl()));
            }
            CoreBinding binding = o.bind.binding(o.ranks);
            progress.note("starting " + o.ranks + " worker processes (" + o.transport + " transport, MTU " + o.mtu
                    + (o.loss > 0 ? String.format(Locale.ROOT, ", %.4g%% injected loss, seed %d", o.loss * 100,
                    o.lossSeed) : "") + binding.describe() + ")");
            LocalCluster.run(o.ranks, subnet, args, o.hosts.environment(o.ranks), binding, results,
                    Duration.ofSeconds(o.timeoutSeconds), System.err);
        }
        List<Row> rows = results.rows();
        Map<String, List<Row>> byAlgorithm = new LinkedHashMap<>();
        for (String a : o.algorithms) {
            byAlgorithm.put(a, new ArrayList<>());
        }
        rows.forEach(r -> byAlgorithm.get(r.algorithm()).add(r));
        long wrong = rows.stream().mapToLong(Row::wrong).sum();
        List<String> summary = summary(byAlgorithm, rows.size(), wrong);
        if (o.json) {
            out.println(Json.write(new DemoReport("demo", o.ranks, o.transport, o.mtu, o.loss, o.lossSeed,
                    o.iterations, o.warmup, o.secondsPerSize,
                    "algbw x 2(P-1)/P (nccl-tests all-reduce formula, for every algorithm)", byAlgorithm, wrong,
                    summary)));
        } else {
            for (Map.Entry<String, List<Row>> e : byAlgorithm.entrySet()) {
                out.print(Tables.demo(title(e.getKey()), e.getValue()));
                out.println();
            }
            summary.forEach(line -> out.println("# " + line));
        }
        out.flush();
        return wrong == 0 ? ExitCode.OK : ExitCode.WRONG_RESULTS;
    }

    private String title(String algorithm) {
        return algorithm + " all-reduce: " + o.ranks + " ranks" + o.hosts.describe() + ", float sum, in place, " + o.transport
                + " transport, MTU " + o.mtu + (algorithm.equals("netreduce") ? ", through the software switch" : "");
    }

    /** The comparison at the largest size both algorithms ran, and the verification verdict. */
    private List<String> summary(Map<String, List<Row>> byAlgorithm, int rowCount, long wrong) {
        List<String> lines = new ArrayList<>();
        Optional<Row> nr = largest(byAlgorithm.get("netreduce"));
        Optional<Row> ring = largest(byAlgorithm.get("ring"));
        if (nr.isPresent() && ring.isPresent() && nr.get().size() == ring.get().size()) {
            Row a = nr.get();
            Row b = ring.get();
            lines.add(String.format(Locale.ROOT, "at %s: netreduce %.2f ms vs ring %.2f ms (%.2fx %s)",
                    Sizes.human(a.size()), a.timeUs() / 1e3, b.timeUs() / 1e3,
                    a.timeUs() <= b.timeUs() ? b.timeUs() / a.timeUs() : a.timeUs() / b.timeUs(),
                    a.timeUs() <= b.timeUs() ? "faster" : "slower"));
            lines.add(String.format(Locale.ROOT, "traffic per worker per all-reduce: netreduce %s vs ring %s "
                            + "(%.2fx; tensor %s)", mb(a.wireBytesPerWorker()), mb(b.wireBytesPerWorker()),
                    (double) a.wireBytesPerWorker() / Math.max(1, b.wireBytesPerWorker()), mb(a.size())));
            String switchCpu = a.switchCpuSPerGb() == null ? "the switch's own CPU not known"
                    : String.format(Locale.ROOT, "the switch's data plane besides: %.3f s/GB", a.switchCpuSPerGb());
            lines.add(String.format(Locale.ROOT, "CPU per rank: netreduce %.3f s/GB vs ring %.3f s/GB (%.2fx); %s",
                    a.cpuSPerGb(), b.cpuSPerGb(), a.cpuSPerGb() / b.cpuSPerGb(), switchCpu));
            if (a.switchCpuSPerGb() != null) {
                lines.add(machineCpu(a, b));
            }
        }
        long retrans = byAlgorithm.values().stream().flatMap(List::stream).mapToLong(Row::retransmittedPackets).sum();
        long timeouts = byAlgorithm.values().stream().flatMap(List::stream).mapToLong(Row::ackTimeouts).sum();
        if (o.loss > 0) {
            lines.add(String.format(Locale.ROOT, "injected loss %.4g%%: %d packets retransmitted by go-back-N, "
                    + "%d ACK timeouts", o.loss * 100, retrans, timeouts));
        }
        lines.add(wrong == 0
                ? rowCount + " rows checked on " + o.ranks + " ranks against the exact reference: all correct"
                : "WRONG RESULTS: " + wrong + " elements differ from the reference");
        return lines;
    }

    /**
     * All the CPU each algorithm spends per GB on this machine, the switch's included: where
     * the ranks and the software switch share the cores, the times follow it
     * (docs/benchmarks.md, "Netreduce's window and native I/O"), which a hardware switch,
     * taking nothing from the hosts, would not.
     */
    private String machineCpu(Row netreduce, Row ring) {
        double nr = o.ranks * netreduce.cpuSPerGb() + netreduce.switchCpuSPerGb();
        double rg = o.ranks * ring.cpuSPerGb();
        int cores = Runtime.getRuntime().availableProcessors();
        String shared = o.ranks + 1 > cores ? "; " + (o.ranks + 1) + " busy processes share " + cores
                + " cores, so the times follow it (a hardware switch would take none of it from the hosts)" : "";
        return String.format(Locale.ROOT, "all CPU per GB on this machine: netreduce %d ranks + switch %.2f s/GB "
                + "vs ring %d ranks %.2f s/GB (%.2fx)%s", o.ranks, nr, o.ranks, rg, nr / rg, shared);
    }

    private static Optional<Row> largest(List<Row> rows) {
        return rows == null ? Optional.empty() : rows.stream().max((x, y) -> Long.compare(x.size(), y.size()));
    }

    private static String mb(long bytes) {
        return String.format(Locale.ROOT, "%.1f MB", bytes / 1e6);
    }

    private Workload workload() {
        if (o.ranks < 1) {
            throw new CliException("--ranks must be at least 1", ExitCode.USAGE, null);
        }
        if (!(o.loss >= 0 && o.loss < 1)) {
            throw new CliException("--loss must be in [0, 1): " + o.loss, ExitCode.USAGE, null);
        }
        for (String a : o.algorithms) {
            if (a.contains(AlgorithmVariant.SEPARATOR)) {
                throw new CliException("--algorithms " + a + ": the demo runs each algorithm as configured; time "
                        + "settings against each other with bench --algorithm NAME,NAME@KEY=VALUE", ExitCode.USAGE, null);
            }
        }
        RunChecks.check(o.algorithms, o.transport, o.loss);
        try {
            io.netreduce.wire.roce.PathMtu.check(o.mtu);
            return new Workload(o.algorithms, Sizes.parseList(o.sizes), o.iterations, o.warmup, o.secondsPerSize,
                    Workload.localWarmupSeconds(o.warmupSeconds, o.ranks),
                    true, false, true, 0);
        } catch (IllegalArgumentException e) {
            throw new CliException(e.getMessage(), ExitCode.USAGE, e);
        }
    }

    private List<String> workerArgs(Workload w, LoopbackSubnet subnet) {
        List<String> args = new ArrayList<>(List.of(
                "--algorithms", String.join(",", w.algorithms()),
                "--sizes", String.join(",", w.sizes().stream().map(String::valueOf).toList()),
                "--iters", String.valueOf(w.iterations()), "--warmup", String.valueOf(w.warmup()),
                "--warmup-seconds", String.valueOf(w.warmupSeconds()),
                "--seconds-per-size", String.valueOf(w.secondsPerSize()),
                "--check", "true", "--out-of-place", "false", "--in-place", "true",
                "--transport", o.transport, "--mtu", String.valueOf(o.mtu),
                "--loss", String.valueOf(o.loss), "--loss-seed", String.valueOf(o.lossSeed)));
        args.addAll(LocalCluster.groupArgs(w.algorithms().size(), subnet));
        if (CliLogging.verbose()) {
            args.add("--verbose");
        }
        return args;
    }

    /** The --json document. */
    record DemoReport(String command, int ranks, String transport, int mtu, double loss, long lossSeed, int iterations,
                      int warmup, double secondsPerSize, String busbwConvention, Map<String, List<Row>> algorithms,
                      long wrongTotal, List<String> summary) {
    }
}
