package io.netreduce.collectives;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Random;

/**
 * One rank as its own process, for the multi-process tests: reads its configuration from
 * the environment (torchrun-style variables), all-reduces seeded tensors of the sizes given
 * in TEST_SIZES, writes each result to TEST_OUT/rank-R-N.bin (little-endian floats) and
 * prints one line per size. With TEST_DIE_RANK equal to its rank it halts abruptly while the
 * others are inside the first all-reduce, as a crashed process would. With TEST_MISMATCH_RANK
 * equal to its rank it calls broadcast (root 0) instead of the first all-reduce: the same
 * length, another operation, which only the agreement check can see. TEST_VALUES=integers
 * draws integer values (exact under any summation order, for hierarchical algorithms), and
 * TEST_DIE_SIGNAL=KILL makes the dying rank send itself SIGKILL instead of halting.
 */
public final class RankMain {
    private RankMain() {
    }

    public static void main(String[] args) throws Exception {
        CommunicatorConfig config = CommunicatorConfig.fromEnvironment();
        long seed = Long.parseLong(System.getenv("TEST_SEED"));
        Path out = Path.of(System.getenv("TEST_OUT"));
        int die = Integer.parseInt(System.getenv().getOrDefault("TEST_DIE_RANK", "-1"));
        int mismatch = Integer.parseInt(System.getenv().getOrDefault("TEST_MISMATCH_RANK", "-1"));
        boolean first = true;
        try (Communicator c = Collectives.open(config)) {
            System.out.println("rank " + c.rank() + " algorithm " + c.algorithm());
            for (String s : System.getenv("TEST_SIZES").split(",")) {
                int n = Integer.parseInt(s);
                Random random = new Random(seed * 1_000_003L + 31L * n + c.rank());
                float[] values = "integers".equals(System.getenv("TEST_VALUES")) ? Tensors.integers(random, n)
                        : Tensors.random(random, n);
                FloatBuffer t = Tensors.make(c.rank() % 2 == 0 ? Tensors.Kind.DIRECT : Tensors.Kind.HEAP, values);
                if (c.rank() == die) {
                    Thread.sleep(500);
                    if ("KILL".equals(System.getenv("TEST_DIE_SIGNAL"))) {
                        new ProcessBuilder("kill", "-KILL", String.valueOf(ProcessHandle.current().pid())).start();
                        Thread.sleep(60_000);
                    }
                    Runtime.getRuntime().halt(3);
                }
                long t0 = System.nanoTime();
                try {
                    if (c.rank() == mismatch && first) {
                        c.broadcast(t, 0);
                    } else {
                        c.allReduce(t);
                    }
                    first = false;
                } catch (CollectiveException e) {
                    System.out.println("FAILED after " + (System.nanoTime() - t0) / 1_000_000 + " ms: " + e.getMessage());
                    System.exit(2);
                }
                System.out.println("n=" + n + " ok " + (System.nanoTime() - t0) / 1000 + " us");
                write(out.resolve("rank-" + c.rank() + "-" + n + ".bin"), t);
            }
            System.out.println("bytes sent " + c.counters().bytesSent());
            System.out.println("retransmitted packets " + c.counters().retransmittedPackets());
        } catch (CollectiveException e) {
            System.out.println("FAILED " + e.getMessage());
            System.exit(2);
        }
    }

    private static void write(Path file, FloatBuffer t) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(t.remaining() * 4).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = t.position(); i < t.limit(); i++) {
            b.putFloat(t.get(i));
        }
        b.flip();
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            while (b.hasRemaining()) {
                ch.write(b);
            }
        }
    }
}
