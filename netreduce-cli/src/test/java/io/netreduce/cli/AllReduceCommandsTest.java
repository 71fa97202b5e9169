package io.netreduce.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.netreduce.verbs.Verbs;
import io.netreduce.verbs.Capability;
import io.netreduce.verbs.TransportCapabilities;
import io.netreduce.verbs.VerbsProvider;
import io.netreduce.verbs.tcp.TcpVerbsProvider;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code demo} and {@code bench} run as real processes (the command, its worker processes,
 * its switch), with small sizes so the suite stays quick on two cores. Every run's JSON is
 * checked for shape and correctness, and every run must leave no process behind.
 */
@Timeout(240)
class AllReduceCommandsTest {
    private static final Duration T = Duration.ofSeconds(180);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long[] SIZE_LIST = {4096, 65536};
    private static final long[] LOSS_SIZES = {4096, 1 << 20};

    /** The soft RoCEv2 provider when it is on the class path (the switch needs it), else tcp. */
    /** The first transport that can run here and carry in-network aggregation, else tcp (always there). */
    static String transport() {
        return Verbs.providers().stream().filter(p -> p.unavailableReason() == null)
                .filter(p -> p.capabilities().has(Capability.ROCE_V2_FRAMES)
                        && p.capabilities().has(Capability.INJECTED_FAULTS))
                .map(VerbsProvider::name).findFirst().orElse(TcpVerbsProvider.NAME);
    }

    static TransportCapabilities capabilities() {
        return Verbs.provider(transport()).capabilities();
    }

    /**
     * netreduce needs the soft provider (the switch splices RoCEv2 datagrams); ring runs on
     * either. {@code -Dnetreduce.cli.test.algorithms=ring} narrows the runs (see the report).
     */
    static List<String> algorithms() {
        List<String> wanted = List.of(System.getProperty("netreduce.cli.test.algorithms", "netreduce,ring").split(","));
        return capabilities().has(Capability.ROCE_V2_FRAMES) ? wanted : List.of("ring");
    }

    @Test
    void demoWithTwoRanks() throws Exception {
        JsonNode doc = demo(2);
        assertEquals(2, doc.get("ranks").asInt());
    }

    /**
     * Four ranks, each size timed for at least -T: a call of 4 or 64 KiB takes far less than
     * 0.1 s / 2, so every row times more calls than -n (five calls just after a barrier timed
     * the ranks' first meetings: milliseconds per 4 KiB call on two cores).
     */
    @Test
    void demoWithFourRanks() throws Exception {
        JsonNode doc = demo(4, SIZE_LIST, "-T", "0.1");
        assertEquals(4, doc.get("ranks").asInt());
        assertEquals(0.1, doc.get("seconds_per_size").asDouble(), 1e-9, doc.toString());
        if (algorithms().containsAll(List.of("netreduce", "ring"))) {
            // The switch runs in the demo's process, so its CPU is known: the summary adds it to the ranks'.
            String summary = doc.get("summary").toString();
            assertTrue(summary.contains("netreduce 4 ranks + switch"), summary);
        }
        for (String algorithm : algorithms()) {
            for (JsonNode r : doc.get("algorithms").get(algorithm)) {
                assertTrue(r.get("iterations").asInt() > 2, "iterations for -T 0.1 with -n 2: " + r);
            }
        }
    }

    /** Seeded loss on every worker's egress: go-back-N repairs it, every result stays exact. */
    @Test
    void demoWithTwoRanksAndLoss() throws Exception {
        assumeSoft();
        JsonNode doc = demo(2, LOSS_SIZES, "--loss", "0.01", "--loss-seed", "11");
        assertRetransmitted(doc);
    }

    @Test
    void demoWithFourRanksAndLoss() throws Exception {
        assumeSoft();
        JsonNode doc = demo(4, LOSS_SIZES, "--loss", "0.01", "--loss-seed", "12");
        assertRetransmitted(doc);
    }

    @Test
    void lossNeedsThePacketTransport() {
        CliRun run = CliRun.run(T, "demo", "--transport", "tcp", "--loss", "0.01");
        run.assertExit(ExitCode.USAGE);
        assertEquals(1, run.stderr.lines().count(), run.describe());
        assertTrue(run.stderr.contains("--loss"), run.describe());
    }

    /**
     * The tcp transport carries no RoCEv2 packets, so no switch can aggregate them: the demo
     * refuses netreduce before it starts anything, in one line that says what to run
     * instead, and never prints a sum (once it printed 523,872 wrong elements here).
     */
    @Test
    void demoOverTcpRefusesNetreduceInOneLineAndNeverPrintsAWrongSum() throws Exception {
        CliRun run = CliRun.run(T, "demo", "--transport", "tcp", "--ranks", "2", "--sizes", "1M");
        run.assertExit(ExitCode.USAGE);
        assertEquals(1, run.stderr.lines().count(), run.describe());
        for (String w : new String[] {"netreduce", "'tcp'", "RoCEv2", "--algorithms ring"}) {
            assertTrue(run.stderr.contains(w), "should name " + w + ": " + run.describe());
        }
        assertFalse(run.stdout.contains("WRONG") || run.stderr.contains("WRONG"), run.describe());
        run.assertNothingLeftBehind();
    }

    @Test
    void benchRefusesNetreduceOverTcpToo() {
        CliRun run = CliRun.run(T, "bench", "--local", "2", "--algorithm", "netreduce", "--transport", "tcp",
                "-b", "4K", "-e", "4K");
        run.assertExit(ExitCode.USAGE);
        assertTrue(run.stderr.contains("'tcp'") && run.stderr.contains("RoCEv2"), run.describe());
    }

    private static void assertRetransmitted(JsonNode doc) {
        for (String algorithm : algorithms()) {
            long retransmitted = 0;
            long injected = 0;
            for (JsonNode r : doc.get("algorithms").get(algorithm)) {
                retransmitted += r.get("retransmitted_packets").asLong();
                // Every counter that moved is in the row, summed over ranks, under its own name.
                JsonNode counters = r.get("transport_counters");
                assertEquals(r.get("retransmitted_packets").asLong(), counters.path("retransmitted_packets").asLong(),
                        algorithm + ": " + r);
                assertTrue(counters.path("packets_sent").asLong() > 0, algorithm + ": " + r);
                injected += counters.path("injected_loss").asLong();
            }
            assertTrue(injected > 0, algorithm + ": the counters show no injected loss under 1 %: " + doc);
            // Over a thousand timed packets at 1 % loss (P(no loss) < 1e-4): no retransmission at
            // all would mean no loss was injected.
            assertTrue(retransmitted > 0, algorithm + ": no packet was retransmitted under 1 % loss: " + doc);
        }
    }

    /**
     * A netreduce row carries the switch data plane's CPU over its timed calls (the switch
     * aggregates every packet of them, so it is never idle through them, and one core cannot
     * give it more than the calls' time); other algorithms' rows do not.
     */
    private static void assertSwitchCpu(String algorithm, JsonNode r, long size) {
        if (!algorithm.equals("netreduce")) {
            assertFalse(r.has("switch_cpu_s_per_call") || r.has("switch_cpu_s_per_gb"), r.toString());
            return;
        }
        double sw = r.get("switch_cpu_s_per_call").asDouble();
        assertTrue(sw > 0 && sw <= 1.5 * r.get("time_us").asDouble() / 1e6, r.toString());
        assertEquals(sw / (size / 1e9), r.get("switch_cpu_s_per_gb").asDouble(), sw * 1e-3, r.toString());
    }

    private static void assumeSoft() {
        org.junit.jupiter.api.Assumptions.assumeTrue(capabilities().has(Capability.INJECTED_FAULTS),
                "injected loss needs a transport that injects faults; " + transport() + " does not");
    }

    private JsonNode demo(int ranks, String... extra) throws Exception {
        return demo(ranks, SIZE_LIST, extra);
    }

    private JsonNode demo(int ranks, long[] sizeList, String... extra) throws Exception {
        String sizes = String.join(",", java.util.Arrays.stream(sizeList).mapToObj(String::valueOf).toList());
        List<String> args = new ArrayList<>(List.of("demo", "--ranks", String.valueOf(ranks), "--sizes", sizes,
                "--iters", "2", "--warmup", "1", "--transport", transport(),
                "--algorithms", String.join(",", algorithms()), "--json"));
        if (!List.of(extra).contains("-T")) {
            args.addAll(List.of("-T", "0")); // exactly -n calls: these tests check results, not speed
        }
        args.addAll(List.of(extra));
        CliRun run = CliRun.run(T, args.toArray(String[]::new));
        run.assertExit(ExitCode.OK);
        JsonNode doc = JSON.readTree(run.stdout);
        assertEquals(0, doc.get("wrong_total").asLong(), run.describe());
        for (String algorithm : algorithms()) {
            JsonNode rows = doc.get("algorithms").get(algorithm);
            assertEquals(sizeList.length, rows.size(), algorithm + ": " + run.stdout);
            for (int i = 0; i < sizeList.length; i++) {
                JsonNode r = rows.get(i);
                assertEquals(sizeList[i], r.get("size").asLong());
                assertEquals(sizeList[i] / 4, r.get("count").asLong());
                assertEquals(0, r.get("wrong").asLong());
                assertTrue(r.get("time_us").asDouble() > 0, r.toString());
                double algbw = sizeList[i] / (r.get("time_us").asDouble() * 1e3);
                assertEquals(algbw, r.get("algbw_gbps").asDouble(), algbw * 1e-9);
                assertEquals(algbw * 2.0 * (ranks - 1) / ranks, r.get("busbw_gbps").asDouble(), algbw * 1e-9);
                // A worker cannot take part in an all-reduce without sending at least its
                // share of the tensor (ring: 2(P-1)/P of it; netreduce: all of it).
                long wire = r.get("wire_bytes_per_worker").asLong();
                double share = algorithm.equals("ring") ? 2.0 * (ranks - 1) / ranks : 1.0;
                assertTrue(wire >= share * sizeList[i], algorithm + " " + r);
                // A rank's process works for at least part of each call, and never for longer
                // than its cores could in that time (2 threads busy at most is far more than enough).
                double cpu = r.get("cpu_s_per_call").asDouble();
                assertTrue(cpu > 0 && cpu < 64 * r.get("time_us").asDouble() / 1e6, algorithm + " " + r);
                assertEquals(cpu / (sizeList[i] / 1e9), r.get("cpu_s_per_gb").asDouble(), cpu * 1e-3, r.toString());
                assertSwitchCpu(algorithm, r, sizeList[i]);
            }
        }
        assertTrue(run.stderr.contains("demo: [" + sizeList.length * algorithms().size() + "/"), run.describe());
        run.assertNothingLeftBehind();
        return doc;
    }

    @Test
    void benchLocalThreeRanksHasBothPlacements() throws Exception {
        String algorithm = algorithms().get(0);
        CliRun run = CliRun.run(T, "bench", "--local", "3", "--algorithm", algorithm, "--transport", transport(),
                "-b", "4K", "-e", "16K", "-f", "2", "-n", "3", "-w", "1", "-T", "0", "-W", "0", "--json");
        run.assertExit(ExitCode.OK);
        JsonNode doc = JSON.readTree(run.stdout);
        assertEquals(3, doc.get("ranks").asInt());
        assertEquals(algorithm, doc.get("algorithm").asText());
        // Three ranks are bound only where there are three CPUs for them: then one each.
        String bound = doc.get("bound_cpus").asText();
        assertTrue(bound.equals("none") || bound.split(",").length == 3, bound);
        JsonNode rows = doc.get("rows");
        assertEquals(3, rows.size(), run.stdout);
        double busbwSum = 0;
        for (int i = 0; i < 3; i++) {
            JsonNode r = rows.get(i);
            assertEquals(4096L << i, r.get("size").asLong());
            for (String placement : List.of("out_of_place", "in_place")) {
                JsonNode p = r.get(placement);
                assertEquals(placement.equals("in_place"), p.get("in_place").asBoolean());
                assertEquals(0, p.get("wrong").asLong(), r.toString());
                assertTrue(p.get("time_us").asDouble() > 0, r.toString());
                assertEquals(3, p.get("iterations").asInt(), "-T 0 times exactly -n: " + r);
                assertTrue(p.get("cpu_s_per_call").asDouble() > 0 && p.get("cpu_s_per_gb").asDouble() > 0, r.toString());
                // Each rank's median and 99th percentile of its three calls (the slowest), averaged over
                // ranks: no rank's mean exceeds its slowest call.
                double p50 = p.get("time_p50_us").asDouble();
                double p99 = p.get("time_p99_us").asDouble();
                assertTrue(p50 > 0 && p50 <= p99 && p.get("time_us").asDouble() <= p99 * (1 + 1e-4), r.toString());
                assertSwitchCpu(algorithm, p, 4096L << i);
                busbwSum += p.get("busbw_gbps").asDouble();
            }
        }
        assertEquals(busbwSum / 6, doc.get("avg_busbw_gbps").asDouble(), busbwSum * 1e-9);
        // The workers run with the Vector API module; the JVM's notice about it is not shown.
        assertFalse(run.stderr.contains("incubator"), run.describe());
        run.assertNothingLeftBehind();
    }

    /**
     * Two algorithms in one run: both groups open in the same rank processes, their calls
     * timed in alternating blocks, each row counting only its own algorithm's traffic (at
     * P = 3 a ring worker sends 4/3 of the tensor, a netreduce worker the tensor once).
     */
    @Test
    void benchTimesTwoAlgorithmsInTheSameRun() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(algorithms().size() > 1, "netreduce needs RoCEv2 frames");
        long size = 1 << 18;
        CliRun run = CliRun.run(T, "bench", "--local", "3", "--algorithm", String.join(",", algorithms()),
                "--transport", transport(), "-b", "256K", "-e", "256K", "-n", "4", "-w", "1", "-T", "0", "-W", "0",
                "--json");
        run.assertExit(ExitCode.OK);
        JsonNode doc = JSON.readTree(run.stdout);
        assertEquals(String.join(",", algorithms()), doc.get("algorithm").asText());
        JsonNode rows = doc.get("rows");
        assertEquals(algorithms().size(), rows.size(), run.stdout);
        for (int i = 0; i < rows.size(); i++) {
            String algorithm = algorithms().get(i);
            for (String placement : List.of("out_of_place", "in_place")) {
                JsonNode p = rows.get(i).get(placement);
                assertEquals(algorithm, p.get("algorithm").asText(), rows.get(i).toString());
                assertEquals(0, p.get("wrong").asLong(), p.toString());
                assertEquals(4, p.get("iterations").asInt(), p.toString());
                long wire = p.get("wire_bytes_per_worker").asLong();
                if (algorithm.equals("ring")) {
                    assertTrue(wire >= 4 * size / 3, p.toString());
                } else {
                    assertTrue(wire >= size && wire < 4 * size / 3, p.toString());
                }
                assertSwitchCpu(algorithm, p, size);
            }
        }
        run.assertNothingLeftBehind();
    }

    /**
     * An algorithm with settings of its own is a group of its own in the same rank processes,
     * timed against the plain one in alternating blocks, and the setting takes effect there
     * alone: with 64 KiB messages instead of 256 KiB the variant's ring sends four times the
     * messages per call for the same tensor, and both sums are exact.
     */
    @Test
    void benchTimesAnAlgorithmAgainstItsOwnVariantInTheSameRun() throws Exception {
        String variant = "ring@NETREDUCE_RING_MESSAGE_BYTES=65536";
        CliRun run = CliRun.run(T, "bench", "--local", "2", "--algorithm", "ring," + variant, "--transport", transport(),
                "-b", "1M", "-e", "1M", "-n", "3", "-w", "1", "-T", "0", "-W", "0", "--json");
        run.assertExit(ExitCode.OK);
        JsonNode rows = JSON.readTree(run.stdout).get("rows");
        assertEquals(2, rows.size(), run.stdout);
        long[] messages = new long[2];
        for (int i = 0; i < 2; i++) {
            JsonNode p = rows.get(i).get("in_place");
            assertEquals(i == 0 ? "ring" : variant, p.get("algorithm").asText(), rows.get(i).toString());
            for (String placement : List.of("out_of_place", "in_place")) {
                assertEquals(0, rows.get(i).get(placement).get("wrong").asLong(), rows.get(i).toString());
            }
            messages[i] = p.get("transport_counters").path("messages_sent").asLong();
            assertTrue(messages[i] > 0, rows.get(i).toString());
        }
        assertTrue(messages[1] >= 3 * messages[0], "64 KiB messages: about 4x the messages of 256 KiB ones, got "
                + messages[1] + " against " + messages[0]);
        run.assertNothingLeftBehind();
    }

    /**
     * A device property in an entry reaches that entry's devices alone: every rank opens the
     * plain group's tcp device with the default spin and the variant's with its own (the
     * devices' debug lines), and both sums are exact. One the transport does not read is
     * refused before any rank starts.
     */
    @Test
    void benchGivesAVariantsDevicePropertiesToItsOwnDevices() throws Exception {
        String variant = "ring@" + TcpVerbsProvider.SPIN_MICROS + "=7";
        CliRun run = CliRun.run(T, "bench", "--verbose", "--local", "2", "--algorithm", "ring," + variant,
                "--transport", TcpVerbsProvider.NAME, "-b", "64K", "-e", "64K", "-n", "3", "-w", "1", "-T", "0", "-W", "0",
                "--json");
        run.assertExit(ExitCode.OK);
        List<String> devices = run.stderr.lines().filter(l -> l.contains("tcp device listening")).toList();
        assertEquals(4, devices.size(), run.describe());
        assertEquals(2, devices.stream().filter(l -> l.contains(", 7 ") && l.contains("s spin")).count(), run.describe());
        JsonNode rows = JSON.readTree(run.stdout).get("rows");
        assertEquals(2, rows.size(), run.stdout);
        for (JsonNode row : rows) {
            for (String placement : List.of("out_of_place", "in_place")) {
                assertEquals(0, row.get(placement).get("wrong").asLong(), row.toString());
            }
        }
        run.assertNothingLeftBehind();
        CliRun bad = CliRun.run(T, "bench", "--local", "2", "--algorithm", "ring,ring@tcp.spinMicro=7",
                "--transport", TcpVerbsProvider.NAME);
        bad.assertExit(ExitCode.USAGE);
        assertTrue(bad.stderr.contains("'tcp.spinMicro'") && bad.stderr.contains(TcpVerbsProvider.SPIN_MICROS),
                bad.describe());
    }

    @Test
    void benchRefusesAVariantSettingOutsideTheAlgorithmsOwn() {
        CliRun run = CliRun.run(T, "bench", "--local", "2", "--algorithm", "ring,ring@NETREDUCE_RANK=1");
        run.assertExit(ExitCode.USAGE);
        assertEquals(1, run.stderr.lines().count(), run.describe());
        assertTrue(run.stderr.contains("NETREDUCE_RANK") && run.stderr.contains("NETREDUCE_RING_MESSAGE_BYTES"),
                run.describe());
        CliRun bad = CliRun.run(T, "bench", "--local", "2", "--algorithm", "ring,ring@NETREDUCE_RING_MESSAGE_BYTES=6");
        bad.assertExit(ExitCode.USAGE);
        assertEquals(1, bad.stderr.lines().count(), bad.describe());
        assertTrue(bad.stderr.contains("'ring@NETREDUCE_RING_MESSAGE_BYTES=6'"), bad.describe());
    }

    @Test
    void benchRefusesAnAlgorithmNamedTwice() {
        CliRun run = CliRun.run(T, "bench", "--local", "2", "--algorithm", "ring,ring");
        run.assertExit(ExitCode.USAGE);
        assertTrue(run.stderr.contains("ring,ring"), run.describe());
    }

    /**
     * --pause-ms sleeps before each timed call, as a training loop computes between
     * all-reduces: each size times exactly -n calls (a time-based count would multiply the
     * pauses), the results stay right, and a call's time leaves the pause out.
     */
    @Test
    void benchPausesBeforeEachTimedCall() throws Exception {
        CliRun run = CliRun.run(T, "bench", "--local", "2", "--algorithm", "ring", "--transport", transport(),
                "-b", "4K", "-e", "4K", "-n", "3", "-w", "1", "-T", "0.1", "-W", "0.2", "--pause-ms", "50", "--json");
        run.assertExit(ExitCode.OK);
        JsonNode doc = JSON.readTree(run.stdout);
        assertEquals(50, doc.get("pause_ms").asInt(), run.stdout);
        for (JsonNode r : doc.get("rows")) {
            for (String placement : List.of("out_of_place", "in_place")) {
                JsonNode p = r.get(placement);
                assertEquals(0, p.get("wrong").asLong(), r.toString());
                assertEquals(3, p.get("iterations").asInt(), "exactly -n calls with a pause: " + r);
                assertTrue(p.get("time_us").asDouble() < 50_000, "the pause is outside the clock: " + r);
            }
        }
        run.assertNothingLeftBehind();
    }

    /**
     * By default a fast call is timed many more times than -n, to fill the time per size
     * (-T), after the JIT warm-up (-W); every rank makes the same calls, so the run ends
     * and the results are right.
     */
    @Test
    void benchTimesFastCallsForTheTimePerSize() throws Exception {
        CliRun run = CliRun.run(T, "bench", "--local", "2", "--algorithm", "ring", "--transport", transport(),
                "-b", "4K", "-e", "8K", "-n", "3", "-w", "1", "-T", "0.1", "-W", "0.2", "--json");
        run.assertExit(ExitCode.OK);
        JsonNode doc = JSON.readTree(run.stdout);
        assertEquals(0.1, doc.get("seconds_per_size").asDouble(), 1e-9, run.stdout);
        for (JsonNode r : doc.get("rows")) {
            for (String placement : List.of("out_of_place", "in_place")) {
                JsonNode p = r.get(placement);
                assertEquals(0, p.get("wrong").asLong(), r.toString());
                // A call of a few KiB takes far less than 0.1 s / 3 even in a cold JVM: more than -n.
                assertTrue(p.get("iterations").asInt() > 3, "iterations for -T 0.1 with -n 3: " + r);
            }
        }
        run.assertNothingLeftBehind();
    }

    /** Ctrl-C while the workers run: the command stops them all and exits 130. */
    @Test
    void ctrlCStopsEveryWorker() throws Exception {
        CliRun.Running running = CliRun.start("demo", "--ranks", "3", "--sizes", "4K", "--iters", "100000",
                "--algorithms", "ring", "--transport", transport());
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (running.processes().size() < 4 && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        assertEquals(4, running.processes().size(), "the demo and its 3 workers: " + running.processes());
        Thread.sleep(1000);
        running.interrupt();
        CliRun run = running.await(Duration.ofSeconds(30));
        run.assertExit(ExitCode.INTERRUPTED);
        run.assertNothingLeftBehind();
    }

    @Test
    void badAlgorithmIsAUsageError() {
        CliRun run = CliRun.run(T, "demo", "--algorithms", "butterfly");
        run.assertExit(ExitCode.USAGE);
        assertEquals(1, run.stderr.lines().count(), run.describe());
        assertTrue(run.stderr.contains("butterfly"), run.describe());
    }
}
