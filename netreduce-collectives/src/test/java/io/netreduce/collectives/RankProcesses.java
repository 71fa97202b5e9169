package io.netreduce.collectives;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Ranks as separate JVM processes running {@link RankMain}, started with torchrun's
 * variables and whatever else a test adds; their logs and results land in one directory.
 * {@link #close} kills whatever still runs.
 */
final class RankProcesses implements AutoCloseable {
    private final Path dir;
    private final List<Process> processes = new ArrayList<>();

    private RankProcesses(Path dir) {
        this.dir = dir;
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    /** The variables every rank gets: rendezvous on a free loopback port, test prefix, seed, sizes, output. */
    static Map<String, String> baseEnvironment(Path dir, int size, long seed, String sizes, int timeoutSeconds)
            throws IOException {
        Map<String, String> env = new LinkedHashMap<>();
        env.put("WORLD_SIZE", String.valueOf(size));
        env.put("MASTER_ADDR", "127.0.0.1");
        env.put("MASTER_PORT", String.valueOf(freePort()));
        env.put("NETREDUCE_LOOPBACK_PREFIX", TestGroup.loopbackPrefix());
        env.put("NETREDUCE_TIMEOUT_SECONDS", String.valueOf(timeoutSeconds));
        env.put("TEST_SEED", String.valueOf(seed));
        env.put("TEST_SIZES", sizes);
        env.put("TEST_OUT", dir.toString());
        return env;
    }

    /** Starts {@code size} ranks with {@code env} plus RANK, each with {@code jvmOptions}. */
    static RankProcesses start(Path dir, int size, Map<String, String> env, String... jvmOptions) throws IOException {
        RankProcesses ps = new RankProcesses(dir);
        try {
            for (int r = 0; r < size; r++) {
                List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java")
                        .toString(), "-Xmx1g"));
                cmd.addAll(List.of(jvmOptions));
                cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), RankMain.class.getName()));
                ProcessBuilder pb = new ProcessBuilder(cmd);
                pb.environment().putAll(env);
                pb.environment().put("RANK", String.valueOf(r));
                pb.redirectErrorStream(true).redirectOutput(dir.resolve("rank-" + r + ".log").toFile());
                ps.processes.add(pb.start());
            }
        } catch (IOException | RuntimeException e) {
            ps.close();
            throw e;
        }
        return ps;
    }

    Process get(int rank) {
        return processes.get(rank);
    }

    /** Waits for rank {@code rank} to exit and returns its exit code; fails the test if it does not in time. */
    int exitCode(int rank, int seconds) throws InterruptedException, IOException {
        if (!processes.get(rank).waitFor(seconds, TimeUnit.SECONDS)) {
            throw new AssertionError("rank " + rank + " did not finish within " + seconds + " s: " + log(rank));
        }
        return processes.get(rank).exitValue();
    }

    String log(int rank) throws IOException {
        return Files.readString(dir.resolve("rank-" + rank + ".log"));
    }

    /** The tensor rank {@code rank} wrote after its all-reduce of {@code n} elements. */
    float[] result(int rank, int n) throws IOException {
        return result(dir, rank, n);
    }

    /** The tensor {@link RankMain} wrote to {@code dir} after rank {@code rank}'s all-reduce of {@code n} elements. */
    static float[] result(Path dir, int rank, int n) throws IOException {
        FloatBuffer got = ByteBuffer.wrap(Files.readAllBytes(dir.resolve("rank-" + rank + "-" + n + ".bin")))
                .order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer();
        float[] out = new float[got.remaining()];
        got.get(out);
        return out;
    }

    @Override
    public void close() {
        for (Process p : processes) {
            p.destroyForcibly();
        }
        for (Process p : processes) {
            try {
                p.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
