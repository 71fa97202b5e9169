package io.netreduce.collectives.bench;

import io.netreduce.collectives.EnvironmentVariables;

import io.netreduce.wire.ina.InaHeader;

import io.netreduce.collectives.Collectives;
import io.netreduce.collectives.Communicator;
import io.netreduce.collectives.CommunicatorConfig;
import io.netreduce.collectives.RealSwitch;
import io.netreduce.collectives.algorithm.MessagePlan;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.nio.FloatBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Latency of one small all-reduce, call by call, with every rank in its own JVM (as a
 * training job runs): P processes each time {@code iterations} blocking in-place
 * all-reduces of {@code bytes} back to back after {@code warmup} untimed ones, and print
 * the median, 90th and 99th percentile and mean per call. Percentiles matter here: on a
 * shared 2-core host a neighbour's burst or one transport retransmission moves the mean by
 * milliseconds while the median stays put.
 *
 * <p>Arguments: {@code ranks algorithm transport bytes iterations warmup}. Agreement mode
 * and other settings come from the usual NETREDUCE_* variables (passed on to the ranks).
 * For netreduce it starts the software switch in this process. Run with
 * {@code mvn -pl netreduce-collectives -am test-compile exec:java -Dexec.classpathScope=test
 * -Dexec.mainClass=io.netreduce.collectives.bench.SmallAllReduceLatency -Dexec.args="2 ring tcp 4096 2000 1000"}.
 */
public final class SmallAllReduceLatency {
    private SmallAllReduceLatency() {
    }

    public static void main(String[] args) throws Exception {
        if (System.getenv("LATENCY_RANK_CHILD") != null) {
            rank(Integer.parseInt(args[3]), Integer.parseInt(args[4]), Integer.parseInt(args[5]));
            return;
        }
        int p = Integer.parseInt(args[0]);
        String algorithm = args[1];
        String transport = args[2];
        RealSwitch sw = CommunicatorConfig.NETREDUCE.equals(algorithm) ? RealSwitch.start(1L << 30) : null;
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        List<Process> ranks = new ArrayList<>();
        try {
            for (int r = 0; r < p; r++) {
                ProcessBuilder pb = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-Xmx512m", "-cp", System.getProperty("java.class.path"), SmallAllReduceLatency.class.getName());
                pb.command().addAll(Arrays.asList(args));
                Map<String, String> env = pb.environment();
                env.put("LATENCY_RANK_CHILD", "1");
                env.put(EnvironmentVariables.RANK, String.valueOf(r));
                env.put(EnvironmentVariables.WORLD_SIZE, String.valueOf(p));
                env.put(EnvironmentVariables.MASTER_ADDR, "127.0.0.1");
                env.put(EnvironmentVariables.MASTER_PORT, String.valueOf(port));
                env.put(EnvironmentVariables.ALGORITHM, algorithm);
                env.put(EnvironmentVariables.TRANSPORT, transport);
                env.putIfAbsent(EnvironmentVariables.LOOPBACK_PREFIX, "127.0.77.");
                if (sw != null) {
                    env.put(EnvironmentVariables.SWITCH, "127.0.0.100:" + sw.data().getPort());
                    env.put(EnvironmentVariables.SWITCH_CONTROL, sw.control().toString());
                }
                pb.redirectErrorStream(true);
                ranks.add(pb.start());
            }
            for (int r = 0; r < p; r++) {
                Process proc = ranks.get(r);
                try (BufferedReader in = new BufferedReader(new InputStreamReader(proc.getInputStream(),
                        StandardCharsets.UTF_8))) {
                    String line;
                    while ((line = in.readLine()) != null) {
                        if (line.startsWith("latency") || line.contains("ERROR") || line.contains("Exception")) {
                            System.out.println(line);
                        }
                    }
                }
                if (!proc.waitFor(600, TimeUnit.SECONDS) || proc.exitValue() != 0) {
                    System.out.println("rank " + r + " failed");
                }
            }
        } finally {
            ranks.forEach(Process::destroyForcibly);
            if (sw != null) {
                sw.close();
            }
        }
    }

    private static void rank(int bytes, int iterations, int warmup) {
        CommunicatorConfig config = CommunicatorConfig.fromEnvironment();
        int n = bytes / 4;
        FloatBuffer t = ByteBuffer.allocateDirect(bytes).order(InaHeader.PAYLOAD_ORDER).asFloatBuffer();
        long[] nanos = new long[iterations];
        try (Communicator c = Collectives.open(config)) {
            for (int i = 0; i < warmup; i++) {
                t.clear().limit(n);
                c.allReduce(t);
            }
            c.barrier();
            for (int i = 0; i < iterations; i++) {
                t.clear().limit(n);
                for (int j = 0; j < n; j += 256) {
                    t.put(j, 1f);
                }
                long t0 = System.nanoTime();
                c.allReduce(t);
                nanos[i] = System.nanoTime() - t0;
            }
            Arrays.sort(nanos);
            double mean = Arrays.stream(nanos).average().orElse(0) / 1e3;
            System.out.println(String.format(Locale.ROOT,
                    "latency rank %d/%d %s over %s, agreement %s, %d B: p50 %.1f us, p90 %.1f us, p99 %.1f us, "
                            + "mean %.1f us (%d calls)", c.rank(), c.size(), c.algorithm(), c.transport(),
                    config.agreement().name().toLowerCase(Locale.ROOT), bytes, nanos[iterations / 2] / 1e3,
                    nanos[iterations * 9 / 10] / 1e3, nanos[Math.min(iterations - 1, iterations * 99 / 100)] / 1e3,
                    mean, iterations));
        }
    }
}
