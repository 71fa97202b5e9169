package io.netreduce.cli;

import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code netreduce demo}: the first command to run; see {@link DemoRunner}. */
@Command(name = "demo", mixinStandardHelpOptions = true, sortOptions = false,
        description = {
            "Starts a software switch and P worker processes on loopback, runs all-reduce with each",
            "algorithm over a range of sizes, checks every result against a reference, and prints an",
            "nccl-tests-style table per algorithm and a short comparison. Exits 3 if any result is wrong.",
            "busbw = algbw x 2(P-1)/P for every algorithm (nccl-tests' all-reduce formula); the",
            "'wire sent' column is what each worker's device actually put on the wire per all-reduce."
        },
        footerHeading = "%nExamples:%n",
        footer = {
            "  netreduce demo",
            "  netreduce demo --ranks 2 --sizes 4K-1M",
            "  netreduce demo --loss 0.001 --loss-seed 7      every result still right, despite loss",
            "  netreduce demo --algorithms ring --json > demo.json"
        })
public final class DemoCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = {"-p", "--ranks"}, paramLabel = "P", defaultValue = "4",
            description = "Worker processes. Default ${DEFAULT-VALUE}.")
    int ranks;

    @Option(names = "--sizes", paramLabel = "SIZES", defaultValue = "4K-64M",
            description = "Tensor sizes in bytes: a range (4K-64M doubles, 4K-64M:4 quadruples) or a list "
                    + "(4K,1M). Default ${DEFAULT-VALUE}.")
    String sizes;

    @Option(names = "--algorithms", paramLabel = "LIST", split = ",", defaultValue = "netreduce,ring",
            description = "Algorithms to compare. Default ${DEFAULT-VALUE}.")
    List<String> algorithms;

    @Option(names = "--loss", paramLabel = "P", defaultValue = "0",
            description = "Probability that a worker's device drops an outgoing packet (seeded). Default ${DEFAULT-VALUE}.")
    double loss;

    @Option(names = "--loss-seed", paramLabel = "SEED", defaultValue = "1",
            description = "Seed of the injected loss (each rank derives its own). Default ${DEFAULT-VALUE}.")
    long lossSeed;

    @Option(names = {"-m", "--mtu"}, paramLabel = "BYTES", defaultValue = "4096",
            description = "Path MTU: 256, 512, 1024, 2048 or 4096. Default ${DEFAULT-VALUE}.")
    int mtu;

    @Option(names = {"-n", "--iters"}, paramLabel = "N", defaultValue = "5",
            description = "Least timed iterations per size (see -T). Default ${DEFAULT-VALUE}.")
    int iterations;

    @Option(names = {"-w", "--warmup"}, paramLabel = "N", defaultValue = "1",
            description = "Least untimed iterations per size (see -T). Default ${DEFAULT-VALUE}.")
    int warmup;

    /**
     * A quarter of a second by default, as bench: five calls of a small tensor timed the JVM's
     * interpreter and the ranks' first meetings after a barrier, not the all-reduce (4 ranks
     * on 2 cores, 4 KiB: 3-10 ms per call where a quarter second of calls shows 0.09-0.19 ms).
     */
    @Option(names = {"-T", "--seconds-per-size"}, paramLabel = "S", defaultValue = "0.25",
            description = io.netreduce.cli.allreduce.Workload.SECONDS_PER_SIZE_HELP)
    double secondsPerSize;

    /**
     * A second by default: timing a cold JVM showed netreduce at 64 MiB 2.8x the ring's time
     * where a warmed one shows 1.6x, the demo's first impression of both algorithms.
     */
    @Option(names = {"-W", "--warmup-seconds"}, paramLabel = "S", defaultValue = "1",
            description = io.netreduce.cli.allreduce.Workload.WARMUP_SECONDS_HELP)
    double warmupSeconds;

    @Option(names = "--transport", paramLabel = "NAME", defaultValue = "soft",
            description = "Verbs provider of the workers. Default ${DEFAULT-VALUE}.")
    String transport;

    @Option(names = "--timeout", paramLabel = "SECONDS", defaultValue = "900",
            description = "Stop everything if the demo has not finished by then. Default ${DEFAULT-VALUE}.")
    int timeoutSeconds;

    @picocli.CommandLine.Mixin
    HostsOption hosts = new HostsOption();

    @picocli.CommandLine.Mixin
    BindOption bind = new BindOption();

    @Option(names = "--json", description = "Print the results as one JSON document on stdout.")
    boolean json;

    @Override
    public Integer call() throws Exception {
        return new DemoRunner(this).run();
    }
}
