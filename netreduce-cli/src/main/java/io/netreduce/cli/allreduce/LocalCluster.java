package io.netreduce.cli.allreduce;

import io.netreduce.collectives.EnvironmentVariables;

import io.netreduce.cli.CliException;
import io.netreduce.cli.launch.CoreBinding;
import io.netreduce.cli.launch.JvmCommand;
import io.netreduce.cli.launch.ProcessGroup;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

/**
 * P worker processes on this machine, joined through the rendezvous environment
 * variables exactly as a launcher (torchrun, mpirun, Slurm) would join them: rank 0 hosts
 * the rendezvous on a free loopback port. Result lines feed {@link Results}; anything
 * else a worker prints goes to stderr with its rank as prefix.
 */
public final class LocalCluster {
    private LocalCluster() {
    }

    /**
     * Runs {@code netreduce worker ARGS} in {@code ranks} processes and waits (bounded)
     * until all exit; the group's cleanup stops the rest if one fails or on Ctrl-C.
     */
    public static void run(int ranks, LoopbackSubnet subnet, List<String> workerArgs, Map<String, String> extraEnv,
                           CoreBinding binding, Results results, Duration timeout, PrintStream err)
            throws InterruptedException {
        int masterPort = freeLoopbackPort();
        AtomicReference<RuntimeException> badLine = new AtomicReference<>();
        try (ProcessGroup group = new ProcessGroup()) {
            for (int rank = 0; rank < ranks; rank++) {
                JvmCommand cmd = JvmCommand.named("rank " + rank).launcher(binding.prefix(rank)).args("worker")
                        .args(workerArgs);
                RendezvousEnv.forRank(rank, ranks, "127.0.0.1", masterPort).forEach(cmd::env);
                cmd.env(EnvironmentVariables.LOCAL_ADDR, subnet.rank(rank));
                extraEnv.forEach(cmd::env);
                String prefix = "[rank " + rank + "] ";
                group.start(cmd, line -> {
                    try {
                        if (!results.accept(line)) {
                            err.println(prefix + line);
                        }
                    } catch (RuntimeException e) {
                        badLine.compareAndSet(null, e);
                    }
                }, err);
            }
            group.awaitSuccess(timeout);
        }
        if (badLine.get() != null) {
            throw badLine.get();
        }
    }

    /**
     * The worker arguments ({@code --rendezvous-ports}, {@code --group-subnets}) for
     * {@code groups} groups a worker opens at once, one per algorithm: each its own rendezvous,
     * and its own loopback /24 for its ranks' devices ({@code subnet}, whose addresses the
     * ranks get from {@link #run}, for the first), so that every group binds the RoCE port on
     * addresses of its own, as groups on separate NICs do.
     */
    public static List<String> groupArgs(int groups, LoopbackSubnet subnet) {
        List<String> ports = new ArrayList<>();
        List<LoopbackSubnet> subnets = new ArrayList<>(List.of(subnet));
        for (int i = 0; i < groups; i++) {
            ports.add(String.valueOf(freeLoopbackPort()));
            if (i > 0) {
                subnets.add(LoopbackSubnet.pickOther(subnets));
            }
        }
        return List.of("--rendezvous-ports", String.join(",", ports),
                "--group-subnets", String.join(",", subnets.stream().map(LoopbackSubnet::prefix).toList()));
    }

    /** A port nobody listens on right now (the OS picks it), for rank 0's rendezvous. */
    public static int freeLoopbackPort() {
        try (ServerSocket s = new ServerSocket()) {
            s.setReuseAddress(true);
            s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            return s.getLocalPort();
        } catch (IOException e) {
            throw new CliException("cannot find a free loopback port: " + e.getMessage(), e);
        }
    }
}
