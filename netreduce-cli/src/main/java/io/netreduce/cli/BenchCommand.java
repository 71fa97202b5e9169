package io.netreduce.cli;

import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code netreduce bench}: nccl-tests' all_reduce_perf for netreduce; see {@link BenchRunner}. */
@Command(name = "bench", mixinStandardHelpOptions = true, sortOptions = false,
        description = {
            "All-reduce benchmark in the style of nccl-tests' all_reduce_perf: float sum from -b to -e",
            "bytes, out-of-place and in-place columns, and the average bus bandwidth at the end.",
            "Ranks run in separate processes: --local P starts them here; without --local this process",
            "is one rank and joins the others through the rendezvous environment (NETREDUCE_RANK,",
            "NETREDUCE_WORLD_SIZE, NETREDUCE_MASTER_ADDR/PORT, or torchrun, Open MPI, Slurm variables).",
            "busbw = algbw x 2(P-1)/P for every algorithm, as nccl-tests defines it for all-reduce; for",
            "netreduce that is an equivalent-ring figure (each worker sends the tensor about once).",
            "Out-of-place calls allReduce(input, output); in-place allReduce(tensor)."
        },
        footerHeading = "%nExamples:%n",
        footer = {
            "  netreduce bench --local 4 -b 4K -e 64M -f 2",
            "  netreduce bench --local 2 --algorithm ring -n 50 -w 10 --json",
            "  netreduce bench --local 4 --algorithm netreduce,ring -b 64M -e 64M   (both in the same run)",
            "  netreduce bench --local 2 --algorithm ring,ring@NETREDUCE_RING_WINDOW=8 --transport tcp   (two settings)",
            "  netreduce bench --local 4 --switch 127.0.0.100:4791,127.0.0.1:7100  (a running switch)",
            "  NETREDUCE_RANK=0 NETREDUCE_WORLD_SIZE=2 NETREDUCE_MASTER_ADDR=127.0.0.1 \\",
            "    NETREDUCE_MASTER_PORT=29500 netreduce bench                         (one rank of two)"
        })
public final class BenchCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--local", paramLabel = "P",
            description = "Start P rank processes on this machine (and a switch, for netreduce).")
    Integer local;

    @Option(names = {"-b", "--minbytes"}, paramLabel = "SIZE", defaultValue = "4K",
            description = "Smallest size. Default ${DEFAULT-VALUE}.")
    String minBytes;

    @Option(names = {"-e", "--maxbytes"}, paramLabel = "SIZE", defaultValue = "64M",
            description = "Largest size. Default ${DEFAULT-VALUE}.")
    String maxBytes;

    @Option(names = {"-f", "--stepfactor"}, paramLabel = "F", defaultValue = "2",
            description = "Multiply the size by F between rows. Default ${DEFAULT-VALUE}.")
    int stepFactor;

    @Option(names = {"-n", "--iters"}, paramLabel = "N", defaultValue = "20",
            description = "Least timed iterations per size (see -T). Default ${DEFAULT-VALUE}.")
    int iterations;

    @Option(names = {"-w", "--warmup_iters"}, paramLabel = "N", defaultValue = "5",
            description = "Least untimed iterations per size (see -T). Default ${DEFAULT-VALUE}.")
    int warmup;

    @Option(names = {"-T", "--seconds-per-size"}, paramLabel = "S", defaultValue = "0.25",
            description = io.netreduce.cli.allreduce.Workload.SECONDS_PER_SIZE_HELP)
    double secondsPerSize;

    @Option(names = "--pause-ms", paramLabel = "MS", defaultValue = "0",
            description = "Each rank sleeps this long before each timed call, outside the clock, as a training "
                    + "loop computes between all-reduces (its ranks do not poll meanwhile); each size then times "
                    + "exactly -n calls. Default ${DEFAULT-VALUE}: back to back.")
    int pauseMillis;

    @Option(names = {"-W", "--warmup-seconds"}, paramLabel = "S", defaultValue = "3",
            description = io.netreduce.cli.allreduce.Workload.WARMUP_SECONDS_HELP)
    double warmupSeconds;

    @Option(names = {"-c", "--check"}, paramLabel = "0|1", defaultValue = "1",
            description = "Check results against a reference (the #wrong columns). Default ${DEFAULT-VALUE}.")
    int check;

    @Option(names = "--algorithm", paramLabel = "NAME[@KEY=VALUE...]", split = ",", defaultValue = "netreduce",
            description = "netreduce (through a switch) or ring, optionally with settings of its own, as "
                    + "ring@NETREDUCE_RING_MESSAGE_BYTES=524288, or device properties of the transport for its own "
                    + "devices, as ring@tcp.spinMicros=0. Several (with --local) are timed in the same rank "
                    + "processes, their calls in alternating blocks, and compared at the end. Default ${DEFAULT-VALUE}.")
    List<String> algorithms;

    @Option(names = "--transport", paramLabel = "NAME", defaultValue = "soft",
            description = "Verbs provider. Default ${DEFAULT-VALUE}.")
    String transport;

    @Option(names = "--switch", paramLabel = "DATA[,CONTROL]",
            description = "A running switch's data (UDP) and control (HTTP) addresses; with --local and "
                    + "netreduce, a switch is started here when this is not given.")
    String switchAddress;

    @Option(names = {"-m", "--mtu"}, paramLabel = "BYTES", defaultValue = "4096",
            description = "Path MTU. Default ${DEFAULT-VALUE}.")
    int mtu;

    @Option(names = "--timeout", paramLabel = "SECONDS", defaultValue = "900",
            description = "Give up if the benchmark has not finished by then. Default ${DEFAULT-VALUE}.")
    int timeoutSeconds;

    @picocli.CommandLine.Mixin
    HostsOption hosts = new HostsOption();

    @picocli.CommandLine.Mixin
    BindOption bind = new BindOption();

    @Option(names = "--json", description = "Print the results as one JSON document on stdout.")
    boolean json;

    @Override
    public Integer call() throws Exception {
        return new BenchRunner(this).run();
    }
}
