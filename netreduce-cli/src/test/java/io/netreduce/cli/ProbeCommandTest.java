package io.netreduce.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.netreduce.verbs.Verbs;
import io.netreduce.verbs.VerbsProvider;
import io.netreduce.verbs.tcp.TcpVerbsProvider;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** {@code netreduce probe bw|rtt} run as real processes over every provider on the class path. */
@Timeout(180)
class ProbeCommandTest {
    private static final Duration T = Duration.ofSeconds(90);
    private static final ObjectMapper JSON = new ObjectMapper();

    static Stream<String> transports() {
        List<String> names = Verbs.providers().stream().filter(p -> p.unavailableReason() == null)
                .map(VerbsProvider::name).toList();
        assertTrue(names.contains(TcpVerbsProvider.NAME), "the tcp provider is always on the class path: " + names);
        return names.stream();
    }

    @ParameterizedTest
    @MethodSource("transports")
    void bandwidthLocalReportsEverySizeAndCleansUp(String transport) throws Exception {
        CliRun run = CliRun.run(T, "probe", "bw", "--local", "--transport", transport, "--size", "1K-16K:4",
                "--iters", "100", "--warmup", "10", "--mtu", "1024", "--json");
        run.assertExit(ExitCode.OK);
        JsonNode doc = JSON.readTree(run.stdout);
        assertEquals("bw", doc.get("test").asText());
        assertEquals(transport, doc.get("transport").asText());
        JsonNode rows = doc.get("results");
        assertEquals(3, rows.size(), run.describe());
        long[] sizes = {1024, 4096, 16384};
        for (int i = 0; i < 3; i++) {
            JsonNode r = rows.get(i);
            assertEquals(sizes[i], r.get("bytes").asLong());
            assertEquals(100, r.get("iterations").asInt());
            double avg = r.get("bw_average_mib_per_sec").asDouble();
            assertTrue(avg > 0 && r.get("bw_peak_mib_per_sec").asDouble() >= avg, r.toString());
            // Message rate and average bandwidth are two views of the same timing.
            assertEquals(avg * (1 << 20) / sizes[i] / 1e6, r.get("msg_rate_mpps").asDouble(), avg * 1e-6, r.toString());
        }
        run.assertNothingLeftBehind();
    }

    @ParameterizedTest
    @MethodSource("transports")
    void roundTripLocalHasOrderedStatistics(String transport) throws Exception {
        CliRun run = CliRun.run(T, "probe", "rtt", "--local", "--transport", transport, "--size", "64,4K",
                "--iters", "100", "--warmup", "10", "--json");
        run.assertExit(ExitCode.OK);
        JsonNode rows = JSON.readTree(run.stdout).get("results");
        assertEquals(2, rows.size(), run.describe());
        for (JsonNode r : rows) {
            double min = r.get("t_min_us").asDouble();
            double typical = r.get("t_typical_us").asDouble();
            double p99 = r.get("t99_us").asDouble();
            double p999 = r.get("t999_us").asDouble();
            double max = r.get("t_max_us").asDouble();
            double avg = r.get("t_avg_us").asDouble();
            assertTrue(0 < min && min <= typical && typical <= p99 && p99 <= p999 && p999 <= max, r.toString());
            assertTrue(min <= avg && avg <= max && r.get("t_stdev_us").asDouble() >= 0, r.toString());
            assertEquals(100, r.get("iterations").asInt());
        }
        run.assertNothingLeftBehind();
    }

    /** perftest style: a server process waits, a client process connects; the port is free afterwards. */
    @Test
    void separateServerAndClientProcessesFreeTheirPort() throws Exception {
        int port = freePort();
        CompletableFuture<CliRun> server = CompletableFuture.supplyAsync(
                () -> CliRun.run(T, "probe", "rtt", "--listen", "127.0.0.1:" + port, "--timeout", "60"));
        CliRun client = null;
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        // The server JVM needs a moment to listen; a refused connection is a clear, quick failure.
        while (System.nanoTime() < deadline) {
            client = CliRun.run(T, "probe", "rtt", "127.0.0.1:" + port, "--transport", "tcp", "--iters", "100",
                    "--size", "256");
            if (client.exitCode == ExitCode.OK || !client.stderr.contains("connection refused")) {
                break;
            }
            Thread.sleep(200);
        }
        client.assertExit(ExitCode.OK);
        assertTrue(client.stdout.contains("t_typical") && client.stdout.contains(" 256 "), client.describe());
        CliRun s = server.get();
        s.assertExit(ExitCode.OK);
        assertTrue(s.stdout.contains("waiting for a client on 127.0.0.1:" + port), s.describe());
        assertTrue(s.stdout.contains("served 1 size(s)"), s.describe());
        s.assertNothingLeftBehind();
        client.assertNothingLeftBehind();
        try (ServerSocket again = new ServerSocket()) {
            again.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
        }
    }

    /** Ctrl-C while the --local server child runs: both processes go, the exit code says why. */
    @Test
    void ctrlCStopsTheServerChildToo() throws Exception {
        CliRun.Running running = CliRun.start("probe", "bw", "--local", "--transport", "tcp", "--size", "64K",
                "--iters", "100000000", "--timeout", "120");
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!running.stderrSoFar().contains("probe bw: 64 KiB") && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        assertEquals(2, running.processes().size(), "client and server should be running: " + running.processes()
                + "\n" + running.stderrSoFar());
        running.interrupt();
        CliRun run = running.await(Duration.ofSeconds(30));
        run.assertExit(ExitCode.INTERRUPTED);
        run.assertNothingLeftBehind();
    }

    @Test
    void portInUseIsOneLine() throws Exception {
        try (ServerSocket taken = new ServerSocket()) {
            taken.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            CliRun run = CliRun.run(T, "probe", "bw", "--listen", "127.0.0.1:" + taken.getLocalPort());
            run.assertExit(ExitCode.FAILED);
            assertEquals(1, run.stderr.lines().count(), run.describe());
            assertTrue(run.stderr.contains("cannot listen on 127.0.0.1:" + taken.getLocalPort()), run.describe());
        }
    }

    private static int freePort() throws Exception {
        try (ServerSocket s = new ServerSocket()) {
            s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            return s.getLocalPort();
        }
    }
}
