package io.netreduce.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@code netreduce switch} as a real process: serves its control plane, stops on Ctrl-C, frees its ports. */
@Timeout(120)
class SwitchCommandTest {
    @Test
    void servesUntilCtrlCAndFreesItsPorts() throws Exception {
        int dataPort = freeUdpPort();
        int controlPort = freeTcpPort();
        CliRun.Running running = CliRun.start("switch", "--data", "127.0.0.1:" + dataPort,
                "--control", "127.0.0.1:" + controlPort, "--memory", "64M");
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        HttpRequest rings = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + controlPort + "/rings"))
                .timeout(Duration.ofSeconds(5)).build();
        HttpResponse<String> response = null;
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (response == null && System.nanoTime() < deadline) {
            try {
                response = http.send(rings, HttpResponse.BodyHandlers.ofString());
            } catch (java.io.IOException notYet) {
                Thread.sleep(100);
            }
        }
        assertTrue(response != null, "control plane never answered; stderr:\n" + running.stderrSoFar());
        assertEquals(200, response.statusCode(), response.body());
        assertTrue(response.body().contains("\"rings\""), response.body());
        running.interrupt();
        CliRun run = running.await(Duration.ofSeconds(30));
        run.assertExit(ExitCode.INTERRUPTED);
        assertTrue(run.stdout.startsWith("netreduce switch: data 127.0.0.1:" + dataPort), run.describe());
        assertTrue(run.stdout.contains("aggregator memory 64 MiB"), run.describe());
        assertTrue(run.stderr.contains("switch up"), "the switch's INFO log should show: " + run.describe());
        run.assertNothingLeftBehind();
        try (DatagramSocket udp = new DatagramSocket(new InetSocketAddress(InetAddress.getLoopbackAddress(), dataPort));
             ServerSocket tcp = new ServerSocket()) {
            tcp.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), controlPort));
        }
    }

    @Test
    void dataPortInUseIsOneLine() throws Exception {
        try (DatagramSocket taken = new DatagramSocket(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))) {
            CliRun run = CliRun.run(Duration.ofSeconds(60), "switch", "--data", "127.0.0.1:" + taken.getLocalPort(),
                    "--control", "127.0.0.1:" + freeTcpPort());
            run.assertExit(ExitCode.FAILED);
            assertEquals(1, run.stderr.lines().filter(l -> l.startsWith("netreduce switch:")).count(), run.describe());
            assertTrue(run.stderr.toLowerCase(java.util.Locale.ROOT).contains("address already in use"), run.describe());
            assertTrue(!run.stderr.contains("\tat "), run.describe());
        }
    }

    private static int freeTcpPort() throws Exception {
        try (ServerSocket s = new ServerSocket()) {
            s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            return s.getLocalPort();
        }
    }

    private static int freeUdpPort() throws Exception {
        try (DatagramSocket s = new DatagramSocket(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))) {
            return s.getLocalPort();
        }
    }
}
