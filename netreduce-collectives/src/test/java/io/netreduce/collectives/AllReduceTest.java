package io.netreduce.collectives;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.FloatBuffer;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * All-reduce through communicators for P = 1..8 in one JVM, both algorithms, sizes 0, 1,
 * 3, 255, one MTU of elements and message boundaries ±1, with tensors of every kind:
 * every rank's result equals the documented reference bit for bit (so ranks agree with
 * each other too).
 */
@Timeout(120)
@SuppressWarnings("try")
class AllReduceTest {
    private static final int MTU_ELEMENTS = TestGroup.MTU / 4;
    private static final int MESSAGE_ELEMENTS = TestGroup.MESSAGE_BYTES / 4;
    private static final int[] SIZES = {0, 1, 3, 255, MTU_ELEMENTS, MESSAGE_ELEMENTS - 1, MESSAGE_ELEMENTS,
            MESSAGE_ELEMENTS + 1, 5 * MESSAGE_ELEMENTS + 1, 100_003};

    @ParameterizedTest(name = "{1} P={0}")
    @CsvSource({"1,netreduce", "2,netreduce", "3,netreduce", "4,netreduce", "5,netreduce", "6,netreduce",
            "7,netreduce", "8,netreduce", "1,ring", "2,ring", "3,ring", "4,ring", "5,ring", "6,ring", "7,ring",
            "8,ring"})
    void sumsMatchTheDocumentedOrderOnEveryRank(int p, String algorithm) throws Exception {
        try (TestGroup g = TestGroup.open(p, algorithm)) {
            String actual = g.comms.get(0).algorithm();
            assertEquals(algorithm, actual);
            int round = 0;
            for (int n : SIZES) {
                for (Tensors.Kind kind : Tensors.Kind.values()) {
                    long seed = 31L * p + 7L * n + kind.ordinal() + 1000L * round++;
                    checkOnce(g, actual, n, kind, seed);
                }
            }
        }
    }

    static void checkOnce(TestGroup g, String algorithm, int n, Tensors.Kind kind, long seed) throws Exception {
        int p = g.comms.size();
        Random random = new Random(seed);
        float[][] inputs = new float[p][];
        FloatBuffer[] tensors = new FloatBuffer[p];
        for (int r = 0; r < p; r++) {
            inputs[r] = Tensors.random(random, n);
            tensors[r] = Tensors.make(kind, inputs[r]);
        }
        g.all((r, c) -> {
            c.allReduce(tensors[r]);
            return null;
        }, 60);
        float[] expected = Tensors.expected(algorithm, inputs);
        for (int r = 0; r < p; r++) {
            assertNull(Tensors.diff(tensors[r], expected), "seed " + seed + ", " + algorithm + ", P=" + p + ", n=" + n
                    + ", " + kind + ", rank " + r);
        }
    }

    /**
     * The ring's three paths, each forced on for every size: the pipelined ring (both
     * thresholds 0) sums in its chunk order, the small-tensor path (threshold 1 MiB) in rank
     * order, halving-doubling (P = 4 and 8, its threshold 1 MiB) in its documented order,
     * recursive doubling (P = 4 and 8, both thresholds 1 MiB, up to 1 MiB / 4P elements,
     * the gather above) as a pairwise tree, with tensors smaller than the ring (empty
     * chunks) and larger than a message alike.
     */
    @ParameterizedTest(name = "P={0} small-tensor threshold {1}, halving-doubling {2}")
    @CsvSource({"2,0,0", "3,0,0", "4,0,0", "5,0,0", "2,1048576,0", "3,1048576,0", "5,1048576,0", "4,0,1048576",
            "8,0,1048576", "4,1048576,1048576", "8,1048576,1048576"})
    void everyRingPathSumsInItsDocumentedOrder(int p, int smallTensorBytes, int halvingDoublingBytes) throws Exception {
        CommunicatorConfig.Builder template = TestGroup.template("ring").smallTensorBytes(smallTensorBytes)
                .halvingDoublingBytes(halvingDoublingBytes);
        try (TestGroup g = TestGroup.open(p, template, 1L << 30)) {
            for (int n : new int[] {1, 3, 7, 1000, 5 * MESSAGE_ELEMENTS + 1, 100_003}) {
                long seed = 977L * p + n + smallTensorBytes + 31L * halvingDoublingBytes;
                Random random = new Random(seed);
                float[][] inputs = new float[p][];
                FloatBuffer[] sums = new FloatBuffer[p];
                FloatBuffer[] maxima = new FloatBuffer[p];
                FloatBuffer[] outputs = new FloatBuffer[p];
                for (int r = 0; r < p; r++) {
                    inputs[r] = Tensors.random(random, n);
                    sums[r] = Tensors.make(Tensors.Kind.DIRECT, inputs[r]);
                    maxima[r] = Tensors.make(Tensors.Kind.HEAP, inputs[r]);
                    outputs[r] = Tensors.make(Tensors.Kind.DIRECT, new float[n]);
                }
                FloatBuffer[] outOfPlaceInputs = new FloatBuffer[p];
                for (int r = 0; r < p; r++) {
                    outOfPlaceInputs[r] = Tensors.make(Tensors.Kind.DIRECT, inputs[r]);
                }
                g.all((r, c) -> {
                    c.allReduce(sums[r]);
                    c.allReduce(maxima[r], ReduceOp.MAX);
                    c.allReduce(outOfPlaceInputs[r], outputs[r]);
                    return null;
                }, 60);
                float[] sum = Tensors.expected("ring", inputs, smallTensorBytes, halvingDoublingBytes);
                float[] max = inputs[0].clone();
                for (int r = 1; r < p; r++) {
                    for (int i = 0; i < n; i++) {
                        max[i] = Math.max(max[i], inputs[r][i]);
                    }
                }
                for (int r = 0; r < p; r++) {
                    String what = "seed " + seed + ", P=" + p + ", n=" + n + ", thresholds " + smallTensorBytes + "/"
                            + halvingDoublingBytes + ", rank " + r;
                    assertNull(Tensors.diff(sums[r], sum), what + " SUM");
                    assertNull(Tensors.diff(maxima[r], max), what + " MAX");
                    assertNull(Tensors.diff(outputs[r], sum), what + " SUM out of place");
                    assertNull(Tensors.diff(outOfPlaceInputs[r], inputs[r]), what + " input changed");
                }
            }
        }
    }

    /**
     * Calls that take the three paths in turn, back to back with no barrier between them, so
     * that a partner's next operation often arrives before this rank's has finished: every
     * result is the documented one. Seeded; the seed is printed.
     */
    @Test
    void halvingDoublingInterleavesWithTheOtherPaths() throws Exception {
        int p = 4;
        long seed = System.nanoTime();
        System.out.println("halvingDoublingInterleavesWithTheOtherPaths seed " + seed);
        Random random = new Random(seed);
        CommunicatorConfig.Builder template = TestGroup.template("ring").smallTensorBytes(4096)
                .halvingDoublingBytes(256 * 1024);
        int[] sizes = {500, 20_000, 70_000, 3, 40_000, 64_000};
        int rounds = 12;
        float[][][] inputs = new float[rounds * sizes.length][p][];
        FloatBuffer[][] tensors = new FloatBuffer[rounds * sizes.length][p];
        for (int k = 0; k < inputs.length; k++) {
            int n = sizes[k % sizes.length] + random.nextInt(8);
            for (int r = 0; r < p; r++) {
                inputs[k][r] = Tensors.random(random, n);
                tensors[k][r] = Tensors.make(Tensors.Kind.values()[(k + r) % Tensors.Kind.values().length], inputs[k][r]);
            }
        }
        try (TestGroup g = TestGroup.open(p, template, 1L << 30)) {
            g.all((r, c) -> {
                for (FloatBuffer[] t : tensors) {
                    c.allReduce(t[r]);
                }
                return null;
            }, 90);
        }
        for (int k = 0; k < inputs.length; k++) {
            float[] expected = Tensors.expected("ring", inputs[k], 4096, 256 * 1024);
            for (int r = 0; r < p; r++) {
                assertNull(Tensors.diff(tensors[k][r], expected), "seed " + seed + ", call " + k + " ("
                        + inputs[k][r].length + " elements), rank " + r);
            }
        }
    }

    /** Long (about a minute on a loaded 2-core box): run with -Dnetreduce.test.large=true. */
    @ParameterizedTest(name = "{0} 64 MiB")
    @CsvSource({"netreduce", "ring"})
    @EnabledIfSystemProperty(named = "netreduce.test.large", matches = "true")
    void sixtyFourMebibytes(String algorithm) throws Exception {
        try (TestGroup g = TestGroup.open(4, TestGroup.template(algorithm).messageBytes(256 * 1024).ringMessageBytes(256 * 1024), 1L << 30)) {
            checkOnce(g, g.comms.get(0).algorithm(), 16 * 1024 * 1024, Tensors.Kind.DIRECT, 64);
        }
    }

    @ParameterizedTest(name = "{0} AVG and async")
    @CsvSource({"netreduce", "ring"})
    void averageAndAsyncOperationsRunInCallOrder(String algorithm) throws Exception {
        int p = 3;
        int n = 3000;
        long seed = 99;
        Random random = new Random(seed);
        float[][] a = new float[p][];
        float[][] b = new float[p][];
        FloatBuffer[] ta = new FloatBuffer[p];
        FloatBuffer[] tb = new FloatBuffer[p];
        for (int r = 0; r < p; r++) {
            a[r] = Tensors.random(random, n);
            b[r] = Tensors.random(random, n);
            ta[r] = Tensors.make(Tensors.Kind.DIRECT, a[r]);
            tb[r] = Tensors.make(Tensors.Kind.HEAP, b[r]);
        }
        try (TestGroup g = TestGroup.open(p, algorithm)) {
            g.all((r, c) -> {
                CompletableFuture<Void> f1 = c.allReduceAsync(ta[r], ReduceOp.AVG);
                CompletableFuture<Void> f2 = c.allReduceAsync(tb[r]);
                CompletableFuture.allOf(f1, f2).get(30, TimeUnit.SECONDS);
                return null;
            }, 60);
        }
        float[] avg = Tensors.expected(algorithm, a);
        for (int i = 0; i < n; i++) {
            avg[i] = avg[i] / p;
        }
        float[] sum = Tensors.expected(algorithm, b);
        for (int r = 0; r < p; r++) {
            assertNull(Tensors.diff(ta[r], avg), "seed " + seed + " AVG rank " + r);
            assertNull(Tensors.diff(tb[r], sum), "seed " + seed + " SUM rank " + r);
        }
    }

    /**
     * MAX and MIN on the ring, in and out of place, with NaN, signed zeros and infinities
     * among random values: every rank gets the element-wise Math.max/min bit for bit.
     */
    @ParameterizedTest(name = "{1} P={0}")
    @CsvSource({"2,MAX", "3,MAX", "3,MIN", "4,MIN"})
    void maxAndMinOnTheRing(int p, ReduceOp op) throws Exception {
        int n = 5 * MESSAGE_ELEMENTS + 3;
        long seed = 1234L + p * 31L + op.ordinal();
        Random random = new Random(seed);
        float[][] values = new float[p][];
        for (int r = 0; r < p; r++) {
            values[r] = Tensors.random(random, n);
            float[] special = {Float.NaN, -0.0f, 0.0f, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY};
            for (int k = 0; k < 50; k++) {
                values[r][random.nextInt(n)] = special[random.nextInt(special.length)];
            }
        }
        float[] expected = values[0].clone();
        for (int r = 1; r < p; r++) {
            for (int i = 0; i < n; i++) {
                expected[i] = op == ReduceOp.MAX ? Math.max(expected[i], values[r][i]) : Math.min(expected[i], values[r][i]);
            }
        }
        FloatBuffer[] inPlace = new FloatBuffer[p];
        FloatBuffer[] input = new FloatBuffer[p];
        FloatBuffer[] output = new FloatBuffer[p];
        for (int r = 0; r < p; r++) {
            inPlace[r] = Tensors.make(Tensors.Kind.DIRECT, values[r]);
            input[r] = Tensors.make(Tensors.Kind.HEAP, values[r]);
            output[r] = Tensors.make(Tensors.Kind.DIRECT, new float[n]);
        }
        try (TestGroup g = TestGroup.open(p, "ring")) {
            g.all((r, c) -> {
                c.allReduce(inPlace[r], op);
                c.allReduce(input[r], output[r], op);
                return null;
            }, 60);
        }
        for (int r = 0; r < p; r++) {
            assertNull(Tensors.diff(inPlace[r], expected), "seed " + seed + " " + op + " in place, rank " + r);
            assertNull(Tensors.diff(output[r], expected), "seed " + seed + " " + op + " out of place, rank " + r);
        }
    }

    /**
     * The ring's all-gather (its all-gather half alone) over several messages per chunk,
     * into registered and staged outputs, interleaved with all-reduces so that each one's
     * look-ahead receive meets the other kind of operation.
     */
    @Test
    void ringAllGatherInterleavedWithAllReduce() throws Exception {
        int p = 3;
        int m = 2 * MESSAGE_ELEMENTS + 5;
        long seed = 77;
        Random random = new Random(seed);
        try (TestGroup g = TestGroup.open(p, "ring")) {
            for (int round = 0; round < 6; round++) {
                float[][] parts = new float[p][];
                float[][] sums = new float[p][];
                for (int r = 0; r < p; r++) {
                    parts[r] = Tensors.random(random, m);
                    sums[r] = Tensors.random(random, 1 + random.nextInt(3 * MESSAGE_ELEMENTS));
                }
                int n = sums[0].length;
                for (int r = 1; r < p; r++) {
                    sums[r] = java.util.Arrays.copyOf(sums[r], n);
                }
                Tensors.Kind kind = round % 2 == 0 ? Tensors.Kind.DIRECT : Tensors.Kind.HEAP;
                FloatBuffer[] gathered = new FloatBuffer[p];
                FloatBuffer[] reduced = new FloatBuffer[p];
                for (int r = 0; r < p; r++) {
                    gathered[r] = Tensors.make(kind, Tensors.random(random, p * m));
                    reduced[r] = Tensors.make(Tensors.Kind.DIRECT, sums[r]);
                }
                g.all((r, c) -> {
                    c.allGather(Tensors.make(Tensors.Kind.HEAP, parts[r]), gathered[r]);
                    c.allReduce(reduced[r]);
                    return null;
                }, 60);
                float[] all = new float[p * m];
                for (int r = 0; r < p; r++) {
                    System.arraycopy(parts[r], 0, all, r * m, m);
                }
                float[] expectedSum = Tensors.expected(g.comms.get(0).algorithm(), sums);
                for (int r = 0; r < p; r++) {
                    assertNull(Tensors.diff(gathered[r], all), "seed " + seed + " round " + round + " allGather rank " + r);
                    assertNull(Tensors.diff(reduced[r], expectedSum), "seed " + seed + " round " + round + " sum rank " + r);
                }
            }
        }
    }

    @Test
    void aNetreduceGroupRefusesMaxAndMinBeforeSendingAnything() throws Exception {
        try (TestGroup g = TestGroup.open(2, "netreduce")) {
            Communicator c = g.comms.get(0);
            assertEquals(CommunicatorConfig.NETREDUCE, c.algorithm());
            FloatBuffer t = FloatBuffer.allocate(10);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> c.allReduce(t, ReduceOp.MAX));
            assertTrue(e.getMessage().contains("ring") && e.getMessage().contains("only add"), e.getMessage());
            assertThrows(IllegalArgumentException.class, () -> c.allReduceAsync(t, ReduceOp.MIN));
            // Nothing was sent: the group still sums.
            float[][] values = {{1f, 2f}, {3f, 4f}};
            FloatBuffer[] tensors = {Tensors.make(Tensors.Kind.DIRECT, values[0]), Tensors.make(Tensors.Kind.DIRECT, values[1])};
            g.all((r, cc) -> {
                cc.allReduce(tensors[r]);
                return null;
            }, 60);
            assertNull(Tensors.diff(tensors[0], new float[] {4f, 6f}), "the group kept working");
        }
    }

    @ParameterizedTest(name = "{0} broadcast, allGather, barrier")
    @CsvSource({"netreduce", "ring"})
    void broadcastAllGatherAndBarrierAreExact(String algorithm) throws Exception {
        int p = 4;
        int n = 1500;
        long seed = 5;
        Random random = new Random(seed);
        float[] root = Tensors.random(random, n);
        root[0] = -0.0f;
        root[1] = Float.NaN;
        root[2] = Float.NEGATIVE_INFINITY;
        root[3] = Float.MIN_VALUE;
        float[][] parts = new float[p][];
        for (int r = 0; r < p; r++) {
            parts[r] = Tensors.random(random, 7);
        }
        try (TestGroup g = TestGroup.open(p, algorithm)) {
            List<Object> results = g.onEveryRank((r, c) -> {
                FloatBuffer t = Tensors.make(Tensors.Kind.HEAP, r == 2 ? root : Tensors.random(new Random(r), n));
                c.broadcast(t, 2);
                FloatBuffer out = Tensors.make(Tensors.Kind.DIRECT, new float[7 * p]);
                c.allGather(Tensors.make(Tensors.Kind.HEAP, parts[r]), out);
                c.barrier();
                return new FloatBuffer[] {t, out};
            }, 60);
            float[] gathered = new float[7 * p];
            for (int r = 0; r < p; r++) {
                System.arraycopy(parts[r], 0, gathered, 7 * r, 7);
            }
            for (int r = 0; r < p; r++) {
                if (!(results.get(r) instanceof FloatBuffer[] got)) {
                    throw new AssertionError("rank " + r + " failed", (Throwable) results.get(r));
                }
                assertNull(Tensors.diff(got[0], root), "seed " + seed + " broadcast, rank " + r);
                assertNull(Tensors.diff(got[1], gathered), "seed " + seed + " allGather, rank " + r);
            }
        }
    }
}
