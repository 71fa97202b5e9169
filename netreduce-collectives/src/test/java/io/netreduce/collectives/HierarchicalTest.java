package io.netreduce.collectives;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Ranks that share hosts, as separate processes on this machine grouped into emulated hosts
 * ({@code NETREDUCE_HOSTS}): 2 hosts × 2 ranks through the software switch (Parallel
 * NetReduce) and over tcp (hierarchical ring), 4 ranks on one host over shared memory alone,
 * each result exact against a sum computed here in long arithmetic and bit for bit the same
 * on every rank; and a rank killed with SIGKILL mid-call is named by every other rank within
 * the timeout, with no shared-memory segment left behind. Segments go to a directory of this
 * test's own under {@code /dev/shm}, so that other processes' segments cannot confuse it.
 */
@Timeout(300)
class HierarchicalTest {
    private static final int P = 4;
    private static final long SEED = 1812;
    /** More than any packet's wire bytes: the largest path MTU's payload, RoCE headers and ICRC. */
    private static final long LARGEST_PACKET_BYTES = 4096 + 128;

    @TempDir
    Path dir;
    private ShmTestDirectory shm;

    @BeforeEach
    void segmentsDirectory() throws IOException {
        shm = new ShmTestDirectory();
    }

    @AfterEach
    void removeSegmentsDirectory() {
        shm.close();
    }

    private RankProcesses run(String algorithm, String transport, int hosts, RealSwitch sw, int[] sizes,
                              Map<String, String> extra) throws IOException {
        StringBuilder list = new StringBuilder();
        for (int n : sizes) {
            list.append(list.length() == 0 ? "" : ",").append(n);
        }
        Map<String, String> env = RankProcesses.baseEnvironment(dir, P, SEED, list.toString(), 20);
        env.put("NETREDUCE_ALGORITHM", algorithm);
        env.put("NETREDUCE_TRANSPORT", transport);
        env.put("NETREDUCE_HOSTS", String.valueOf(hosts));
        env.put("TEST_VALUES", "integers");
        if (sw != null) {
            env.put("NETREDUCE_SWITCH", "127.0.0.100:" + sw.data().getPort());
            env.put("NETREDUCE_SWITCH_CONTROL", sw.control().toString());
        }
        env.putAll(extra);
        return RankProcesses.start(dir, P, env, shm.jvmOption());
    }

    private void assertExact(RankProcesses ps, int[] sizes, String algorithmLine) throws Exception {
        for (int r = 0; r < P; r++) {
            assertEquals(0, ps.exitCode(r, 200), "rank " + r + ": " + ps.log(r));
            assertTrue(ps.log(r).contains(algorithmLine), "rank " + r + ": " + ps.log(r));
        }
        for (int n : sizes) {
            float[][] inputs = new float[P][];
            for (int r = 0; r < P; r++) {
                inputs[r] = Tensors.integers(new Random(SEED * 1_000_003L + 31L * n + r), n);
            }
            float[] expected = Tensors.exactSum(inputs);
            for (int r = 0; r < P; r++) {
                assertArrayEquals(expected, ps.result(r, n), "seed " + SEED + ", n=" + n + ", rank " + r);
            }
        }
        assertEquals(List.of(), shm.files(), "segments left in " + shm.path());
    }

    @Test
    void parallelNetReduceOnTwoHostsOfTwoRanks() throws Exception {
        int[] sizes = {0, 1, 3, 4097, 100_003, (1 << 20) + 3};
        try (RealSwitch sw = RealSwitch.start(1L << 30);
             RankProcesses ps = run("netreduce", "soft", 2, sw, sizes, Map.of())) {
            assertExact(ps, sizes, "algorithm hierarchical-netreduce: shared memory within 2 hosts × 2 ranks, "
                    + "2 netreduce rings across hosts");
            // Each host sends its tensor once (its two ranks half of it each), plus headers and ACKs.
            // Go-back-N resends on a loaded machine are not the algorithm's traffic: the bound
            // leaves out at most a largest packet's bytes for each packet the transport resent.
            long tensorBytes = 4L * java.util.Arrays.stream(sizes).asLongStream().sum();
            for (int host = 0; host < 2; host++) {
                long sent = counted(ps, 2 * host, "bytes sent") + counted(ps, 2 * host + 1, "bytes sent");
                long resent = counted(ps, 2 * host, "retransmitted packets")
                        + counted(ps, 2 * host + 1, "retransmitted packets");
                long firstSent = Math.max(0, sent - resent * LARGEST_PACKET_BYTES);
                assertTrue(sent >= tensorBytes && firstSent < 1.1 * tensorBytes, "host " + host + " sent " + sent
                        + " bytes (" + resent + " packets resent) for " + tensorBytes + " bytes of tensors");
            }
        }
    }

    /** A count a rank printed at its end ({@code RankMain}: "bytes sent N", "retransmitted packets N"). */
    private static long counted(RankProcesses ps, int rank, String what) throws IOException {
        Matcher m = Pattern.compile(Pattern.quote(what) + " (\\d+)").matcher(ps.log(rank));
        assertTrue(m.find(), ps.log(rank));
        return Long.parseLong(m.group(1));
    }

    @Test
    void hierarchicalRingOverTcpOnTwoHostsOfTwoRanks() throws Exception {
        int[] sizes = {0, 1, 3, 4097, 100_003, (4 << 20) + 5};
        try (RankProcesses ps = run("ring", "tcp", 2, null, sizes, Map.of())) {
            assertExact(ps, sizes, "algorithm hierarchical-ring: shared memory within 2 hosts × 2 ranks, "
                    + "2 rings across hosts");
        }
    }

    @Test
    void fourRanksOnOneHostThroughSharedMemoryAlone() throws Exception {
        int[] sizes = {0, 1, 3, 65_537, (4 << 20) + 1};
        try (RankProcesses ps = run("ring", "tcp", 1, null, sizes, Map.of())) {
            assertExact(ps, sizes, "algorithm shared memory (1 host × 4 ranks)");
        }
    }

    @Test
    void aRankKilledMidCallIsNamedByEveryOtherAndLeavesNoSegment() throws Exception {
        // A file as a process that died before unlinking its segment leaves: the next run removes it.
        Process gone = new ProcessBuilder("true").start();
        gone.waitFor();
        Path stale = Files.write(shm.path().resolve("netreduce-" + gone.pid() + "-0"), new byte[4096]);
        int dead = 3;
        try (RankProcesses ps = run("ring", "tcp", 1, null, new int[] {4 << 20}, Map.of("TEST_DIE_RANK",
                String.valueOf(dead), "TEST_DIE_SIGNAL", "KILL"))) {
            assertEquals(137, ps.exitCode(dead, 60), ps.log(dead));
            List<String> failed = new ArrayList<>();
            for (int r = 0; r < P; r++) {
                if (r == dead) {
                    continue;
                }
                int code = ps.exitCode(r, 60);
                String log = ps.log(r);
                assertEquals(2, code, "rank " + r + ": " + log);
                assertTrue(log.contains("rank " + dead), "rank " + r + ": " + log);
                Matcher m = Pattern.compile("FAILED after (\\d+) ms").matcher(log);
                assertTrue(m.find(), log);
                // The dead rank waits 500 ms before it dies; the others must fail well within the 20 s timeout.
                assertTrue(Long.parseLong(m.group(1)) < 10_000, "rank " + r + ": " + log);
                failed.add("rank " + r);
            }
            assertEquals(3, failed.size());
        }
        assertTrue(Files.notExists(stale), "the dead process's segment " + stale + " was not removed");
        assertEquals(List.of(), shm.files(), "segments left in " + shm.path());
    }
}
