package io.netreduce.cli;

import io.netreduce.collectives.EnvironmentVariables;

import io.netreduce.cli.allreduce.AlgorithmVariant;
import io.netreduce.cli.allreduce.LocalCluster;
import io.netreduce.cli.allreduce.LoopbackSubnet;
import io.netreduce.cli.allreduce.MeteredVerbsProvider;
import io.netreduce.cli.allreduce.Progress;
import io.netreduce.cli.allreduce.RankResult;
import io.netreduce.cli.allreduce.SwitchCpu;
import io.netreduce.cli.allreduce.Results;
import io.netreduce.cli.allreduce.RunChecks;
import io.netreduce.cli.allreduce.Row;
import io.netreduce.cli.allreduce.Tables;
import io.netreduce.cli.allreduce.WorkerLoop;
import io.netreduce.cli.allreduce.Workload;
import io.netreduce.cli.launch.CoreBinding;
import io.netreduce.collectives.Collectives;
import io.netreduce.collectives.Communicator;
import io.netreduce.collectives.CommunicatorConfig;
import io.netreduce.collectives.algorithm.netreduce.NetReduceAlgorithm;
import io.netreduce.verbs.Counter;
import io.netreduce.verbs.FaultPlan;
import java.io.PrintWriter;
import java.nio.FloatBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * {@code netreduce bench}: with --local, P rank processes (and a switch for netreduce)
 * whose result lines are combined here; without, this process is one rank, and the ranks
 * combine their figures with an all-reduce of their own so that rank 0 can print them.
 */
final class BenchRunner {
    static final String BUSBW_CONVENTION =
            "algbw x 2(P-1)/P for every algorithm (nccl-tests all-reduce formula; for netreduce an equivalent-ring figure)";

    private final BenchCommand o;
    private int joinedSize;
    /** The local ranks' cores ({@link CoreBinding#cpus}); "none" where this process is one rank of a group. */
    private String boundCpus = "none";

    BenchRunner(BenchCommand options) {
        this.o = options;
    }

    int run() throws Exception {
        Workload workload = workload();
        List<Row> rows = o.local != null ? runLocal(workload) : runJoined(workload);
        if (rows == null) {
            return ExitCode.OK; // a rank other than 0: rank 0 prints
        }
        return print(rows, o.local != null ? o.local : joinedSize);
    }

    private List<Row> runLocal(Workload workload) throws Exception {
        if (o.local < 1) {
            throw new CliException("--local must be at least 1", ExitCode.USAGE, null);
        }
        Progress progress = new Progress(System.err, "bench", workload.rowsPerAlgorithm() * o.algorithms.size());
        Results results = new Results(o.local, progress);
        List<String> args = new ArrayList<>(List.of(
                "--algorithms", String.join(",", o.algorithms),
                "--sizes", String.join(",", workload.sizes().stream().map(String::valueOf).toList()),
                "--iters", String.valueOf(o.iterations), "--warmup", String.valueOf(o.warmup),
                "--warmup-seconds", String.valueOf(warmupSeconds()),
                "--seconds-per-size", String.valueOf(o.secondsPerSize),
                "--pause-ms", String.valueOf(o.pauseMillis),
                "--check", String.valueOf(o.check != 0), "--out-of-place", "true", "--in-place", "true",
                "--transport", o.transport, "--mtu", String.valueOf(o.mtu)));
        LoopbackSubnet subnet = LoopbackSubnet.pick();
        if (o.algorithms.size() > 1) {
            args.addAll(LocalCluster.groupArgs(o.algorithms.size(), subnet));
        }
        if (CliLogging.verbose()) {
            args.add("--verbose");
        }
        boolean needSwitch = AlgorithmVariant.anyRuns(o.algorithms, NetReduceAlgorithm.NAME);
        // A switch named in the environment (NETREDUCE_SWITCH) reaches the workers as is.
        boolean switchGiven = o.switchAddress != null || System.getenv(EnvironmentVariables.SWITCH) != null;
        try (DemoSwitch sw = needSwitch && !switchGiven ? DemoSwitch.start(progress, subnet) : null) {
            if (sw != null) {
                args.addAll(List.of("--switch", sw.dataAddress(), "--switch-control", sw.controlUrl()));
            } else if (needSwitch && o.switchAddress != null) {
                String[] parts = o.switchAddress.split(",");
                args.addAll(List.of("--switch", parts[0]));
                if (parts.length > 1) {
                    args.addAll(List.of("--switch-control", controlUrl(parts[1])));
                }
            }
            CoreBinding binding = o.bind.binding(o.local);
            boundCpus = binding.cpus();
            progress.note("starting " + o.local + " rank processes (" + String.join(" and ", o.algorithms) + ", " + o.transport
                    + o.hosts.describe() + binding.describe() + ")");
            LocalCluster.run(o.local, subnet, args, o.hosts.environment(o.local), binding, results,
                    Duration.ofSeconds(o.timeoutSeconds), System.err);
        }
        return results.rows();
    }

    /** One rank of a group formed through the launcher's environment. */
    private List<Row> runJoined(Workload workload) {
        if (o.algorithms.size() > 1) {
            throw new CliException("several algorithms in one run need --local (joined through a launcher, a rank "
                    + "has one rendezvous address): run one bench per algorithm", ExitCode.USAGE, null);
        }
        AlgorithmVariant variant = AlgorithmVariant.parse(o.algorithms.get(0));
        String algorithm = variant.algorithm();
        CommunicatorConfig.Builder b = WorkerCommand.WorkerSetup.config(o.transport, o.mtu,
                o.switchAddress == null ? null : o.switchAddress.split(",")[0],
                o.switchAddress == null || !o.switchAddress.contains(",") ? null
                        : controlUrl(o.switchAddress.split(",")[1]),
                60, variant.settings(), variant.deviceProperties()).toBuilder().algorithm(algorithm);
        MeteredVerbsProvider.configure(o.transport, FaultPlan.NONE);
        List<Row> rows = new ArrayList<>();
        CommunicatorConfig config = b.build();
        try (Communicator comm = Collectives.open(config)) {
            WorkerCommand.WorkerSetup.refuseFallback(comm, algorithm);
            joinedSize = comm.size();
            FloatBuffer stats = FloatBuffer.allocate(STATS + 2 * Counter.values().length);
            new WorkerLoop(variant.label(), comm, SwitchCpu.of(config), workload, r -> rows.add(combine(comm, stats, r)))
                    .run();
            return comm.rank() == 0 ? rows : null;
        }
    }

    /** Floats of the figures {@link #combine} sums before the transport counters. */
    private static final int STATS = 14;

    /**
     * Sums every rank's figures with an all-reduce (counts split into 20-bit halves so that
     * float sums stay exact) and builds the row rank 0 prints.
     */
    private static Row combine(Communicator comm, FloatBuffer stats, RankResult r) {
        stats.clear();
        stats.put((float) r.timeUs());
        putSplit(stats, r.wrong());
        putSplit(stats, r.wireBytesSent());
        putSplit(stats, r.retransmittedPackets());
        putSplit(stats, r.ackTimeouts());
        stats.put((float) (r.cpuSeconds() * 1e6));
        // Rank 0's reading of the switch, if any: the others add nothing, and the count says whether it was read.
        boolean switchRead = !Double.isNaN(r.switchCpuSeconds());
        stats.put(switchRead ? (float) (r.switchCpuSeconds() * 1e6) : 0f);
        stats.put(switchRead ? 1f : 0f);
        stats.put((float) r.timeP50Us());
        stats.put((float) r.timeP99Us());
        for (Counter c : Counter.values()) {
            putSplit(stats, r.transportCounters().getOrDefault(RankResult.counterName(c), 0L));
        }
        stats.flip();
        comm.allReduce(stats);
        int p = comm.size();
        double time = stats.get(0) / p;
        long wrong = getSplit(stats, 1);
        long wire = getSplit(stats, 3) / p;
        long retrans = getSplit(stats, 5);
        long timeouts = getSplit(stats, 7);
        double cpu = stats.get(9) / 1e6 / p;
        double switchCpu = stats.get(11) > 0 ? stats.get(10) / 1e6 : Double.NaN;
        double p50 = stats.get(12) / p;
        double p99 = stats.get(13) / p;
        Map<String, Long> counters = new TreeMap<>();
        for (Counter c : Counter.values()) {
            long n = getSplit(stats, STATS + 2 * c.ordinal());
            if (n != 0) {
                counters.put(RankResult.counterName(c), n);
            }
        }
        double algbw = r.bytes() / (time * 1e3);
        return new Row(r.algorithm(), r.bytes(), r.count(), "float", "sum", r.inPlace(), r.iterations(), time, algbw,
                algbw * Row.busBandwidthFactor(p), wrong, wire, retrans, timeouts, cpu, Row.perGb(cpu, r.bytes()),
                counters).withSwitchCpu(switchCpu).withCallTimes(p50, p99);
    }

    private static void putSplit(FloatBuffer b, long v) {
        b.put((float) (v >>> 20));
        b.put((float) (v & 0xFFFFF));
    }

    private static long getSplit(FloatBuffer b, int i) {
        return ((long) b.get(i) << 20) + (long) b.get(i + 1);
    }

    private int print(List<Row> rows, int ranks) {
        long wrong = rows.stream().mapToLong(Row::wrong).sum();
        double avgBusbw = Tables.averageBusBandwidth(rows);
        PrintWriter out = o.spec.commandLine().getOut();
        String algorithms = String.join(",", o.algorithms);
        if (o.json) {
            List<BenchRow> paired = new ArrayList<>();
            for (String a : o.algorithms) {
                List<Row> oop = placement(rows, a, false);
                List<Row> ip = placement(rows, a, true);
                for (int i = 0; i < oop.size(); i++) {
                    Row x = oop.get(i);
                    paired.add(new BenchRow(x.size(), x.count(), x.type(), x.redop(), x, i < ip.size() ? ip.get(i) : null));
                }
            }
            out.println(Json.write(new BenchReport("bench", ranks, algorithms, o.transport, o.mtu,
                    Sizes.parse(o.minBytes), Sizes.parse(o.maxBytes), o.stepFactor, o.iterations, o.warmup,
                    o.secondsPerSize, warmupSeconds(), o.pauseMillis, o.check, boundCpus, BUSBW_CONVENTION, paired, wrong,
                    avgBusbw)));
        } else {
            out.printf(Locale.ROOT, "# netreduce bench (all_reduce_perf style): %s ranks%s, algorithm %s, transport %s, MTU %d%n",
                    String.valueOf(ranks), o.hosts.describe(), algorithms, o.transport, o.mtu);
            out.printf(Locale.ROOT, "# minBytes %d maxBytes %d step: %d(factor) warmup iters: %d iters: %d validation: %d"
                    + " seconds per size: %s, JIT warm-up seconds: %s%n", Sizes.parse(o.minBytes),
                    Sizes.parse(o.maxBytes), o.stepFactor, o.warmup, o.iterations, o.check,
                    String.valueOf(o.secondsPerSize), String.valueOf(warmupSeconds()));
            out.println("# busbw = " + BUSBW_CONVENTION);
            if (o.algorithms.size() > 1) {
                out.println("# the algorithms' timed calls alternate in blocks in the same rank processes");
            }
            if (o.pauseMillis > 0) {
                out.printf(Locale.ROOT, "# each rank sleeps %d ms before each timed call (outside the clock): exactly %d "
                        + "calls per size%n", o.pauseMillis, o.iterations);
            }
            out.println("#");
            for (String a : o.algorithms) {
                if (o.algorithms.size() > 1) {
                    out.println("# " + a);
                }
                out.print(Tables.bench(placement(rows, a, false), placement(rows, a, true)));
            }
            for (String a : o.algorithms.subList(1, o.algorithms.size())) {
                out.print(Tables.against(o.algorithms.get(0), a, rows));
            }
            out.printf(Locale.ROOT, "# Out of bounds values : %d %s%n", wrong, wrong == 0 ? "OK" : "WRONG");
            out.printf(Locale.ROOT, "# Avg bus bandwidth    : %.4f %n", avgBusbw);
        }
        out.flush();
        return wrong == 0 ? ExitCode.OK : ExitCode.WRONG_RESULTS;
    }

    private static List<Row> placement(List<Row> rows, String algorithm, boolean inPlace) {
        return rows.stream().filter(r -> r.algorithm().equals(algorithm) && r.inPlace() == inPlace).toList();
    }

    /** The JIT warm-up the ranks ran: scaled for local ranks that outnumber the cores. */
    private double warmupSeconds() {
        return o.local != null ? Workload.localWarmupSeconds(o.warmupSeconds, o.local) : o.warmupSeconds;
    }

    private static String controlUrl(String hostPort) {
        return hostPort.startsWith("http") ? hostPort : "http://" + hostPort;
    }

    private Workload workload() {
        if (o.algorithms.stream().distinct().count() < o.algorithms.size()) {
            throw new CliException("--algorithm names " + String.join(",", o.algorithms) + ": each at most once",
                    ExitCode.USAGE, null);
        }
        RunChecks.check(o.algorithms, o.transport, 0);
        try {
            io.netreduce.wire.roce.PathMtu.check(o.mtu);
            List<Long> sizes = Sizes.range(Sizes.parse(o.minBytes), Sizes.parse(o.maxBytes), o.stepFactor);
            return new Workload(o.algorithms, sizes, o.iterations, o.warmup, o.secondsPerSize,
                    o.warmupSeconds, o.check != 0, true, true, o.pauseMillis);
        } catch (IllegalArgumentException e) {
            throw new CliException(e.getMessage(), ExitCode.USAGE, e);
        }
    }

    record BenchRow(long size, long count, String type, String redop, Row outOfPlace, Row inPlace) {
    }

    record BenchReport(String command, int ranks, String algorithm, String transport, int mtu, long minBytes,
                       long maxBytes, int stepFactor, int iterations, int warmup, double secondsPerSize,
                       double warmupSeconds, int pauseMs, int check, String boundCpus,
                       String busbwConvention,
                       List<BenchRow> rows, long wrongTotal, double avgBusbwGbps) {
    }
}
