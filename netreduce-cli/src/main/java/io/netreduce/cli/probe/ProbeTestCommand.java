package io.netreduce.cli.probe;

import io.netreduce.cli.Addresses;
import io.netreduce.cli.CliException;
import io.netreduce.cli.ExitCode;
import io.netreduce.cli.Json;
import io.netreduce.cli.Sizes;
import io.netreduce.cli.launch.JvmCommand;
import io.netreduce.cli.launch.ManagedProcess;
import io.netreduce.cli.launch.ProcessGroup;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * Options and roles shared by {@code probe bw} and {@code probe rtt}: server (no SERVER
 * argument), client (SERVER given) or both (--local, which starts the server as a child
 * process so that the two sides never share a JVM).
 */
abstract class ProbeTestCommand implements Callable<Integer> {
    /** perftest's default port for its side channel. */
    static final int DEFAULT_PORT = 18515;
    /** The line a server prints when it is ready; --local parses it. */
    static final String WAITING = "waiting for a client on ";

    private final ProbeKind kind;

    @Spec
    CommandSpec spec;

    @Parameters(index = "0", arity = "0..1", paramLabel = "SERVER",
            description = "Server's side-channel address host[:port] (default port " + DEFAULT_PORT + "); "
                    + "omit it to be the server.", defaultValue = "")
    String server;

    @Option(names = "--local", description = "Start a server process on loopback and run the client against it.")
    boolean local;

    @Option(names = {"-s", "--size"}, paramLabel = "SIZES", defaultValue = "65536",
            description = "Message size, or a range (4K-1M doubles) or list (64,4K). Default ${DEFAULT-VALUE}.")
    String sizes;

    @Option(names = {"-n", "--iters"}, paramLabel = "N", defaultValue = "1000", description = "Measured iterations per size. Default ${DEFAULT-VALUE}.")
    int iterations;

    @Option(names = "--warmup", paramLabel = "N", defaultValue = "100", description = "Unmeasured iterations before each size. Default ${DEFAULT-VALUE}.")
    int warmup;

    @Option(names = {"-m", "--mtu"}, paramLabel = "BYTES", defaultValue = "4096", description = "Path MTU: 256, 512, 1024, 2048 or 4096. Default ${DEFAULT-VALUE}.")
    int mtu;

    @Option(names = {"-t", "--tx-depth"}, paramLabel = "N", defaultValue = "64", description = "bw: writes in flight. Default ${DEFAULT-VALUE}.")
    int txDepth;

    @Option(names = "--transport", paramLabel = "NAME", defaultValue = "soft",
            description = "Verbs provider: soft (RoCEv2 over UDP), tcp, ... Default ${DEFAULT-VALUE}. "
                    + "The client chooses; the server follows.")
    String transport;

    @Option(names = "--listen", paramLabel = "HOST:PORT", defaultValue = "127.0.0.1:" + DEFAULT_PORT,
            description = "Server: side-channel address to listen on. Default ${DEFAULT-VALUE}.")
    String listen;

    @Option(names = "--device", paramLabel = "ADDR[:PORT]",
            description = "Local address (and port; 0 = any) of this side's verbs device. "
                    + "Default 127.0.0.1:0 for the server, 127.0.0.2:0 for the client.")
    String device;

    @Option(names = "--timeout", defaultValue = "60", paramLabel = "SECONDS",
            description = "Give up after this long waiting for the peer or a completion. Default ${DEFAULT-VALUE}.")
    int timeoutSeconds;

    @Option(names = "--json", description = "Print the results as one JSON document on stdout.")
    boolean json;

    ProbeTestCommand(ProbeKind kind) {
        this.kind = kind;
    }

    @Override
    public Integer call() throws Exception {
        ProbeParameters p = parameters();
        if (local) {
            return runLocal(p);
        }
        if (server.isEmpty()) {
            return runServer(p);
        }
        return runClient(p, Addresses.parse(server, DEFAULT_PORT));
    }

    private ProbeParameters parameters() {
        List<Long> sizeList;
        try {
            sizeList = Sizes.parseList(sizes);
        } catch (IllegalArgumentException e) {
            throw new CliException("--size: " + e.getMessage(), ExitCode.USAGE, e);
        }
        for (long s : sizeList) {
            if (s > Integer.MAX_VALUE / 2) {
                throw new CliException("--size: " + s + " bytes is too large for one message", ExitCode.USAGE, null);
            }
        }
        if (iterations < 1 || warmup < 0 || txDepth < 1 || timeoutSeconds < 1) {
            throw new CliException("--iters, --tx-depth and --timeout must be positive, --warmup not negative",
                    ExitCode.USAGE, null);
        }
        try {
            io.netreduce.wire.roce.PathMtu.check(mtu);
        } catch (IllegalArgumentException e) {
            throw new CliException("--mtu: " + e.getMessage(), ExitCode.USAGE, e);
        }
        return new ProbeParameters(kind, transport, mtu, sizeList, iterations, warmup, Math.min(txDepth, 128),
                Duration.ofSeconds(timeoutSeconds));
    }

    private int runServer(ProbeParameters p) throws Exception {
        InetSocketAddress listenAt = parseAddress("--listen", listen, DEFAULT_PORT);
        InetSocketAddress deviceAt = parseAddress("--device", device == null ? "127.0.0.1:0" : device, 0);
        PrintWriter out = spec.commandLine().getOut();
        new ProbeServer(kind, listenAt, deviceAt, p.timeout(), out).serveOne();
        return ExitCode.OK;
    }

    private int runClient(ProbeParameters p, InetSocketAddress serverAt) throws Exception {
        InetSocketAddress deviceAt = parseAddress("--device", device == null ? "127.0.0.2:0" : device, 0);
        ProbeReport report = new ProbeClient(p, serverAt, deviceAt, spec.commandLine().getErr()).run();
        PrintWriter out = spec.commandLine().getOut();
        out.print(json ? Json.write(report) + System.lineSeparator() : report.table());
        out.flush();
        return ExitCode.OK;
    }

    /** --local: a server child on an ephemeral side-channel port, then the client here. */
    private int runLocal(ProbeParameters p) throws Exception {
        if (!server.isEmpty()) {
            throw new CliException("--local starts its own server; do not also give SERVER", ExitCode.USAGE, null);
        }
        BlockingQueue<String> serverLines = new ArrayBlockingQueue<>(64);
        try (ProcessGroup group = new ProcessGroup()) {
            List<String> args = new ArrayList<>(List.of("probe", kind.wireName(), "--listen", "127.0.0.1:0",
                    "--timeout", String.valueOf(timeoutSeconds)));
            if (spec.commandLine().getParseResult().hasMatchedOption("--verbose")) {
                args.add("--verbose");
            }
            ManagedProcess child = group.start(JvmCommand.named("probe server").args(args),
                    serverLines::offer, System.err);
            InetSocketAddress serverAt = awaitServer(child, serverLines, Duration.ofSeconds(Math.min(30, timeoutSeconds)));
            int code = runClient(p, serverAt);
            int serverCode = child.awaitExit(Duration.ofSeconds(10));
            if (serverCode != 0) {
                throw new CliException("probe server exited with code " + serverCode + ": " + child.lastErrorLine());
            }
            return code;
        }
    }

    private static InetSocketAddress awaitServer(ManagedProcess child, BlockingQueue<String> lines, Duration timeout)
            throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            String line = lines.poll(50, TimeUnit.MILLISECONDS);
            if (line != null && line.startsWith(WAITING)) {
                return Addresses.parse(line.substring(WAITING.length()).trim(), DEFAULT_PORT);
            }
            if (line == null && !child.isAlive()) {
                child.awaitExit(Duration.ofSeconds(5));
                throw new CliException("probe server exited before listening: " + child.lastErrorLine());
            }
        }
        throw new CliException("probe server did not start listening within " + timeout.toSeconds() + " s");
    }

    private static InetSocketAddress parseAddress(String option, String text, int defaultPort) {
        try {
            return Addresses.parse(text, defaultPort);
        } catch (IllegalArgumentException e) {
            throw new CliException(option + ": " + e.getMessage(), ExitCode.USAGE, e);
        }
    }
}
