package io.netreduce.collectives;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Four ranks launched by Open MPI's {@code mpirun}, with no netreduce variable but the
 * master address (host:port in one): each rank takes its rank, the world size and its local
 * rank from Open MPI's environment, the ranks find they share one host, and the all-reduce
 * runs through shared memory, exact on every rank. Skipped where {@code mpirun} is not
 * installed, unless CI=true ({@code .ci/run} installs Debian's {@code openmpi-bin}).
 */
@Timeout(240)
class MpirunTest {
    private static final int P = 4;
    private static final long SEED = 77;

    @TempDir
    Path dir;

    private static String mpirun() {
        for (String d : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            Path p = Path.of(d, "mpirun");
            if (Files.isExecutable(p)) {
                return p.toString();
            }
        }
        if ("true".equals(System.getenv("CI"))) {
            fail("mpirun is not installed, and CI=true requires this test to run (apt-get install -y openmpi-bin)");
        }
        Assumptions.abort("mpirun is not installed (apt-get install -y openmpi-bin); set CI=true to make this a failure");
        return null;
    }

    @Test
    void ranksLaunchedByMpirunTakeTheirPlaceFromItsEnvironment() throws Exception {
        String mpirun = mpirun();
        int[] sizes = {1, 4097, (1 << 20) + 7};
        try (ShmTestDirectory shm = new ShmTestDirectory()) {
            List<String> cmd = new ArrayList<>(List.of(mpirun, "--oversubscribe", "-np", String.valueOf(P),
                    "-x", "NETREDUCE_MASTER_ADDR", "-x", "TEST_SEED", "-x", "TEST_SIZES", "-x", "TEST_OUT",
                    "-x", "TEST_VALUES",
                    Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx512m",
                    shm.jvmOption(), "-cp", System.getProperty("java.class.path"),
                    RankMain.class.getName()));
            ProcessBuilder pb = new ProcessBuilder(cmd);
            Map<String, String> env = pb.environment();
            // Nothing of another launcher or of netreduce but the master address.
            env.keySet().removeIf(k -> k.startsWith("NETREDUCE_") || k.startsWith("OMPI_") || k.startsWith("SLURM_")
                    || List.of("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")
                    .contains(k));
            env.put("NETREDUCE_MASTER_ADDR", "127.0.0.1:" + RankProcesses.freePort());
            env.put("OMPI_ALLOW_RUN_AS_ROOT", "1");
            env.put("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
            env.put("TEST_SEED", String.valueOf(SEED));
            env.put("TEST_SIZES", String.join(",", java.util.Arrays.stream(sizes).mapToObj(String::valueOf).toList()));
            env.put("TEST_OUT", dir.toString());
            env.put("TEST_VALUES", "integers");
            Path log = dir.resolve("mpirun.log");
            Process p = pb.redirectErrorStream(true).redirectOutput(log.toFile()).start();
            try {
                assertTrue(p.waitFor(200, TimeUnit.SECONDS), "mpirun did not finish: " + Files.readString(log));
            } finally {
                p.destroyForcibly();
            }
            String out = Files.readString(log, StandardCharsets.UTF_8);
            assertEquals(0, p.exitValue(), out);
            for (int r = 0; r < P; r++) {
                assertTrue(out.contains("rank " + r + " algorithm shared memory (1 host × 4 ranks)"), out);
            }
            for (int n : sizes) {
                float[][] inputs = new float[P][];
                for (int r = 0; r < P; r++) {
                    inputs[r] = Tensors.integers(new Random(SEED * 1_000_003L + 31L * n + r), n);
                }
                float[] expected = Tensors.exactSum(inputs);
                for (int r = 0; r < P; r++) {
                    assertArrayEquals(expected, RankProcesses.result(dir, r, n), "seed " + SEED + ", n=" + n
                            + ", rank " + r);
                }
            }
            assertEquals(List.of(), shm.files(), "segments left behind");
        }
    }
}
