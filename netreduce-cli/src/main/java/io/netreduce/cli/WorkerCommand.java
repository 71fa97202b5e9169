package io.netreduce.cli;

import io.netreduce.cli.allreduce.AlgorithmVariant;
import io.netreduce.cli.allreduce.LoopbackSubnet;
import io.netreduce.cli.allreduce.MeteredVerbsProvider;
import io.netreduce.cli.allreduce.RankResult;
import io.netreduce.cli.allreduce.SwitchCpu;
import io.netreduce.cli.allreduce.WorkerLoop;
import io.netreduce.cli.allreduce.Workload;
import io.netreduce.cli.launch.ParentWatchdog;
import io.netreduce.collectives.Collectives;
import io.netreduce.collectives.Communicator;
import io.netreduce.collectives.CommunicatorConfig;
import io.netreduce.verbs.FaultPlan;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * One rank of {@code demo} or {@code bench --local}, started by them with the rendezvous
 * environment set. Joins one group per algorithm, all open at once, runs {@link WorkerLoop}
 * over them, and prints one {@code RESULT {json}} line per row on stdout for the parent to
 * combine.
 */
@Command(name = "worker", hidden = true, description = "Internal: one rank of demo or bench --local.")
public final class WorkerCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--algorithms", split = ",", required = true)
    List<String> algorithms;

    @Option(names = "--sizes", split = ",", required = true)
    List<Long> sizes;

    @Option(names = "--iters", defaultValue = "5")
    int iterations;

    @Option(names = "--warmup", defaultValue = "1")
    int warmup;

    @Option(names = "--warmup-seconds", defaultValue = "0")
    double warmupSeconds;

    @Option(names = "--seconds-per-size", defaultValue = "0")
    double secondsPerSize;

    @Option(names = "--pause-ms", defaultValue = "0")
    int pauseMillis;

    @Option(names = "--check", defaultValue = "true", arity = "1")
    boolean check;

    @Option(names = "--out-of-place", defaultValue = "false", arity = "1")
    boolean outOfPlace;

    @Option(names = "--in-place", defaultValue = "true", arity = "1")
    boolean inPlace;

    @Option(names = "--transport", defaultValue = "soft")
    String transport;

    @Option(names = "--mtu", defaultValue = "4096")
    int mtu;

    @Option(names = "--loss", defaultValue = "0")
    double loss;

    @Option(names = "--loss-seed", defaultValue = "1")
    long lossSeed;

    @Option(names = "--switch")
    String switchData;

    @Option(names = "--switch-control")
    String switchControl;

    @Option(names = "--op-timeout", defaultValue = "60")
    int opTimeoutSeconds;

    /**
     * One rendezvous port per algorithm (each algorithm is a new group): reusing rank 0's
     * port would let a fast rank reach the previous group's store before rank 0 closes it.
     */
    @Option(names = "--rendezvous-ports", split = ",")
    List<Integer> rendezvousPorts;

    /**
     * One loopback /24 per algorithm ({@code 127.A.B}): the groups are open at once, and each
     * rank's device of each binds the RoCE port on this rank's address in its group's subnet.
     */
    @Option(names = "--group-subnets", split = ",")
    List<String> groupSubnets;

    @Override
    public Integer call() {
        ParentWatchdog.startIfChild();
        Workload workload = new Workload(algorithms, sizes, iterations, warmup, secondsPerSize, warmupSeconds, check,
                outOfPlace, inPlace, pauseMillis);
        CommunicatorConfig base = WorkerSetup.config(transport, mtu, switchData, switchControl, opTimeoutSeconds, Map.of(), Map.of());
        // Each rank drops its own packets, from its own seed derived from the user's.
        MeteredVerbsProvider.configure(transport, loss > 0
                ? FaultPlan.loss(lossSeed * 1_000_003L + base.rank(), loss) : FaultPlan.NONE);
        PrintWriter out = spec.commandLine().getOut();
        // Serialise once before joining: the first use of Jackson takes a few hundred ms, and a
        // rank that stalls that long between collectives can exhaust its peers' RC retries
        // (in a netreduce ring a sender's ACK waits for the slowest rank's packet).
        Json.line(new RankResult(0, "warm-up", 4, 1, true, 1, 1, 0, 0, 0, 0, 0));
        // Every algorithm's group is open at once, and WorkerLoop times their calls in the same
        // alternating blocks: the comparison is then between algorithms, not between spells of
        // a shared machine's speed.
        List<Communicator> open = new ArrayList<>();
        RuntimeException failure = null;
        try {
            List<WorkerLoop.Member> members = new ArrayList<>();
            for (int i = 0; i < algorithms.size(); i++) {
                AlgorithmVariant variant = AlgorithmVariant.parse(algorithms.get(i));
                String algorithm = variant.algorithm();
                CommunicatorConfig.Builder b = WorkerSetup.config(transport, mtu, switchData, switchControl,
                        opTimeoutSeconds, variant.settings(), variant.deviceProperties()).toBuilder().algorithm(algorithm);
                if (rendezvousPorts != null && i < rendezvousPorts.size()) {
                    b.masterPort(rendezvousPorts.get(i));
                }
                if (groupSubnets != null && i < groupSubnets.size()) {
                    b.localAddress(LoopbackSubnet.parse(groupSubnets.get(i)).rank(base.rank()));
                }
                CommunicatorConfig config = b.build();
                Communicator comm = Collectives.open(config);
                open.add(comm);
                WorkerSetup.refuseFallback(comm, algorithm);
                members.add(new WorkerLoop.Member(variant.label(), comm, SwitchCpu.of(config)));
            }
            new WorkerLoop(members, workload, r -> {
                out.println(RankResult.PREFIX + Json.line(r));
                out.flush();
            }).run();
        } catch (RuntimeException e) {
            failure = e;
        }
        // The last opened first, as try-with-resources would; a failure closing one neither
        // leaves the others open nor hides the failure that came before it.
        for (int i = open.size() - 1; i >= 0; i--) {
            try {
                open.get(i).close();
            } catch (RuntimeException e) {
                if (failure == null) {
                    failure = e;
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
        return ExitCode.OK;
    }

    /** Builds a rank's configuration from the launcher environment plus the command's settings. */
    static final class WorkerSetup {
        private WorkerSetup() {
        }

        /**
         * Fails if the group runs another algorithm than {@code algorithm} (a fallback); its
         * hierarchical form, where ranks share hosts, is the same algorithm.
         */
        static void refuseFallback(Communicator comm, String algorithm) {
            if (comm.algorithm().contains("fallback from")) {
                throw new CliException("asked for " + algorithm + " all-reduce but the group fell back to "
                        + comm.algorithm() + " (see the log above)");
            }
        }

        static CommunicatorConfig config(String transport, int mtu, String switchData, String switchControl,
                                         int opTimeoutSeconds, Map<String, String> settings,
                                         Map<String, String> deviceProperties) {
            Map<String, String> env = new HashMap<>(System.getenv());
            env.putAll(settings); // an algorithm variant's own settings over the process's
            CommunicatorConfig.Builder b = CommunicatorConfig.fromEnvironment(env).toBuilder()
                    .transport(MeteredVerbsProvider.NAME).mtu(mtu).timeout(Duration.ofSeconds(opTimeoutSeconds));
            deviceProperties.forEach(b::deviceProperty);
            if (switchData != null) {
                InetSocketAddress data = Addresses.parse(switchData, 4791);
                b.switchAddress(data);
            }
            if (switchControl != null) {
                b.switchControl(URI.create(switchControl));
            }
            return b.build();
        }
    }
}
