package io.netreduce.collectives;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.FloatBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Every collective of a group whose ranks share emulated hosts, four ranks in this JVM
 * (their shared-memory segments are real files under /dev/shm, mapped by each rank): MAX,
 * MIN and AVG all-reduce, broadcast, all-gather and reduce-scatter, exact against values
 * computed here, for heap and direct tensors; a call that differs between two ranks of one
 * host fails on every rank naming it; and steady-state calls send nothing to the store.
 */
@Timeout(180)
class HierarchicalCollectivesTest {
    private static final int P = 4;

    private static TestGroup group(int hosts) throws Exception {
        return TestGroup.open(P, TestGroup.template("ring").hosts(hosts).timeout(Duration.ofSeconds(10)), 1L << 30);
    }

    private static float[] reduce(float[][] in, ReduceOp op) {
        float[] out = in[0].clone();
        for (int r = 1; r < in.length; r++) {
            for (int i = 0; i < out.length; i++) {
                out[i] = switch (op) {
                    case MAX -> Math.max(out[i], in[r][i]);
                    case MIN -> Math.min(out[i], in[r][i]);
                    default -> out[i] + in[r][i];
                };
            }
        }
        if (op == ReduceOp.AVG) {
            for (int i = 0; i < out.length; i++) {
                out[i] /= in.length;
            }
        }
        return out;
    }

    private static float[] values(FloatBuffer b) {
        float[] v = new float[b.remaining()];
        b.duplicate().get(v);
        return v;
    }

    @ParameterizedTest(name = "{0} hosts")
    @CsvSource({"1", "2"})
    void everyCollectiveIsExact(int hosts) throws Exception {
        long seed = 99 + hosts;
        Random random = new Random(seed);
        int n = 300_001;
        try (TestGroup g = group(hosts)) {
            assertTrue(g.comms.get(0).algorithm().startsWith(hosts == 1 ? "shared memory" : "hierarchical-ring"),
                    g.comms.get(0).algorithm());
            for (ReduceOp op : ReduceOp.values()) {
                float[][] in = new float[P][];
                FloatBuffer[] t = new FloatBuffer[P];
                for (int r = 0; r < P; r++) {
                    in[r] = Tensors.integers(random, n);
                    t[r] = Tensors.make(r % 2 == 0 ? Tensors.Kind.HEAP : Tensors.Kind.DIRECT, in[r]);
                }
                g.all((r, c) -> {
                    c.allReduce(t[r], op);
                    return null;
                }, 60);
                float[] expected = reduce(in, op);
                for (int r = 0; r < P; r++) {
                    assertArrayEquals(expected, values(t[r]), "seed " + seed + " " + op + " rank " + r);
                }
            }
            float[][] in = new float[P][];
            for (int r = 0; r < P; r++) {
                in[r] = Tensors.integers(random, n);
            }
            FloatBuffer[] b = new FloatBuffer[P];
            FloatBuffer[] gathered = new FloatBuffer[P];
            FloatBuffer[] scattered = new FloatBuffer[P];
            for (int r = 0; r < P; r++) {
                b[r] = Tensors.make(Tensors.Kind.DIRECT, in[r]);
                gathered[r] = FloatBuffer.allocate(P * n);
                scattered[r] = FloatBuffer.allocate(n / P);
            }
            g.all((r, c) -> {
                c.allGather(FloatBuffer.wrap(in[r]), gathered[r]);
                c.reduceScatter(FloatBuffer.wrap(in[r], 0, P * (n / P)).slice(), scattered[r], ReduceOp.SUM);
                c.broadcast(b[r], 2);
                return null;
            }, 60);
            float[] sum = reduce(in, ReduceOp.SUM);
            for (int r = 0; r < P; r++) {
                for (int q = 0; q < P; q++) {
                    assertArrayEquals(in[q], java.util.Arrays.copyOfRange(values(gathered[r]), q * n, (q + 1) * n),
                            "seed " + seed + " all-gather, rank " + r + ", block " + q);
                }
                assertArrayEquals(java.util.Arrays.copyOfRange(sum, r * (n / P), (r + 1) * (n / P)),
                        values(scattered[r]), "seed " + seed + " reduce-scatter, rank " + r);
                assertArrayEquals(in[2], values(b[r]), "seed " + seed + " broadcast, rank " + r);
            }
        }
    }

    @Test
    void steadyStateCallsSendNothingToTheStore() throws Exception {
        try (TestGroup g = group(2)) {
            FloatBuffer[] t = new FloatBuffer[P];
            for (int r = 0; r < P; r++) {
                t[r] = FloatBuffer.allocate(5000);
            }
            g.all((r, c) -> {
                c.allReduce(t[r]);
                return null;
            }, 30);
            long[] before = new long[P];
            for (int r = 0; r < P; r++) {
                before[r] = g.comms.get(r).counters().rendezvousMessages();
            }
            g.all((r, c) -> {
                for (int i = 0; i < 50; i++) {
                    c.allReduce(t[r]);
                }
                return null;
            }, 60);
            for (int r = 0; r < P; r++) {
                assertEquals(before[r], g.comms.get(r).counters().rendezvousMessages(), "rank " + r);
            }
        }
    }

    @Test
    void aMismatchBetweenRanksOfOneHostFailsEveryRankNamingIt() throws Exception {
        try (TestGroup g = group(2)) {
            List<Object> out = g.onEveryRank((r, c) -> {
                c.allReduce(FloatBuffer.allocate(r == 3 ? 65 : 64));
                return "returned";
            }, 30);
            for (int r = 0; r < P; r++) {
                CollectiveException e = assertInstanceOf(CollectiveException.class, out.get(r), "rank " + r);
                assertTrue(e.getMessage().contains("rank 3: allReduce(65)") && e.getMessage().contains("allReduce(64)"),
                        "rank " + r + ": " + e.getMessage());
            }
        }
    }
}
