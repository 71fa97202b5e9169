package io.netreduce.collectives;

import io.netreduce.wire.ina.InaHeader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netreduce.collectives.algorithm.MessagePlan;
import java.nio.ByteBuffer;
import java.nio.FloatBuffer;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Out-of-place all-reduce through real communicators: for every pairing of input and
 * output kinds (registered in place, staged heap, staged other byte order, read-only
 * input), the output holds the documented sum bit for bit, the input is left exactly as it
 * was, and nothing outside either buffer's position..limit is written. Views of the same
 * elements run in place; partly overlapping views and unequal lengths are refused.
 */
@Timeout(120)
class OutOfPlaceTest {
    /** Several ring chunks and windowed messages, not a multiple of either. */
    private static final int N = 5 * TestGroup.MESSAGE_BYTES / 4 + 7;

    @ParameterizedTest(name = "{0} P={1}")
    @CsvSource({"netreduce,3", "ring,3", "ring,2", "netreduce,1"})
    void everyPairingOfInputAndOutputKinds(String algorithm, int p) throws Exception {
        try (TestGroup g = TestGroup.open(p, algorithm)) {
            String actual = g.comms.get(0).algorithm();
            long seed = 17L * p + algorithm.hashCode();
            Random random = new Random(seed);
            for (Tensors.Kind inKind : Tensors.Kind.values()) {
                for (Tensors.Kind outKind : Tensors.Kind.values()) {
                    for (boolean readOnlyInput : new boolean[] {false, true}) {
                        checkOnce(g, actual, random, inKind, outKind, readOnlyInput, ReduceOp.SUM,
                                "seed " + seed + " in " + inKind + (readOnlyInput ? " read-only" : "") + " out " + outKind);
                    }
                }
            }
            checkOnce(g, actual, random, Tensors.Kind.DIRECT, Tensors.Kind.DIRECT, false, ReduceOp.AVG,
                    "seed " + seed + " AVG");
        }
    }

    /**
     * Ring chunks of at least 8 MiB, where out-of-place sums go to the output with
     * non-temporal stores (where the native library is loaded, as it is wherever gcc built
     * it): the same bits as the documented order, for SUM and AVG, and MAX (which keeps the
     * ordinary path) beside them.
     */
    @ParameterizedTest(name = "P={0}")
    @CsvSource({"2", "3"})
    void largeChunksSumOutOfPlaceInTheDocumentedOrder(int p) throws Exception {
        int n = p * (8 << 20) / 4 + 12_345;
        try (TestGroup g = TestGroup.open(p, TestGroup.template("ring"), 1L << 30)) {
            long seed = 4099L * p;
            Random random = new Random(seed);
            for (ReduceOp op : new ReduceOp[] {ReduceOp.SUM, ReduceOp.AVG, ReduceOp.MAX}) {
                checkOnce(g, "ring", random, n, Tensors.Kind.ALLOCATED, Tensors.Kind.DIRECT, false, op,
                        "seed " + seed + " n " + n + " " + op);
            }
        }
    }

    private static void checkOnce(TestGroup g, String algorithm, Random random, Tensors.Kind inKind,
                                  Tensors.Kind outKind, boolean readOnlyInput, ReduceOp op, String what)
            throws Exception {
        checkOnce(g, algorithm, random, N, inKind, outKind, readOnlyInput, op, what);
    }

    private static void checkOnce(TestGroup g, String algorithm, Random random, int n, Tensors.Kind inKind,
                                  Tensors.Kind outKind, boolean readOnlyInput, ReduceOp op, String what)
            throws Exception {
        int p = g.comms.size();
        float[][] values = new float[p][];
        FloatBuffer[] inputs = new FloatBuffer[p];
        FloatBuffer[] outputs = new FloatBuffer[p];
        for (int r = 0; r < p; r++) {
            values[r] = Tensors.random(random, n);
            FloatBuffer in = Tensors.make(inKind, values[r]);
            inputs[r] = readOnlyInput ? in.asReadOnlyBuffer() : in;
            outputs[r] = Tensors.make(outKind, Tensors.random(random, n)); // garbage the result must replace
        }
        g.all((r, c) -> {
            c.allReduce(inputs[r], outputs[r], op);
            return null;
        }, 60);
        float[] expected = Tensors.expected(algorithm, values);
        if (op == ReduceOp.MAX) {
            expected = values[0].clone();
            for (int r = 1; r < p; r++) {
                for (int i = 0; i < n; i++) {
                    expected[i] = Math.max(expected[i], values[r][i]);
                }
            }
        } else if (op == ReduceOp.AVG) {
            for (int i = 0; i < n; i++) {
                expected[i] /= p;
            }
        }
        for (int r = 0; r < p; r++) {
            assertNull(Tensors.diff(outputs[r], expected), what + ", output of rank " + r);
            assertNull(Tensors.diff(inputs[r], values[r]), what + ", input of rank " + r + " changed");
        }
    }

    @Test
    void viewsOfTheSameElementsRunInPlaceAndPartlyOverlappingOnesAreRefused() throws Exception {
        int p = 2;
        int n = 1000;
        Random random = new Random(3);
        float[][] values = {Tensors.random(random, n), Tensors.random(random, n)};
        try (TestGroup g = TestGroup.open(p, "ring")) {
            FloatBuffer[] tensors = new FloatBuffer[p];
            for (int r = 0; r < p; r++) {
                tensors[r] = Tensors.make(Tensors.Kind.DIRECT, values[r]);
            }
            g.all((r, c) -> {
                c.allReduce(tensors[r].duplicate(), tensors[r].duplicate());
                return null;
            }, 60);
            float[] expected = Tensors.expected(g.comms.get(0).algorithm(), values);
            for (int r = 0; r < p; r++) {
                assertNull(Tensors.diff(tensors[r], expected), "in place through two views, rank " + r);
            }

            Communicator c = g.comms.get(0);
            FloatBuffer whole = ByteBuffer.allocateDirect(4 * 2 * n).order(InaHeader.PAYLOAD_ORDER).asFloatBuffer();
            FloatBuffer in = whole.duplicate().position(0).limit(n);
            FloatBuffer out = whole.duplicate().position(n / 2).limit(n / 2 + n);
            IllegalArgumentException overlap = assertThrows(IllegalArgumentException.class, () -> c.allReduce(in, out));
            assertTrue(overlap.getMessage().contains("overlap"), overlap.getMessage());
            float[] heap = new float[2 * n];
            IllegalArgumentException heapOverlap = assertThrows(IllegalArgumentException.class,
                    () -> c.allReduce(FloatBuffer.wrap(heap, 0, n), FloatBuffer.wrap(heap, 1, n)));
            assertTrue(heapOverlap.getMessage().contains("overlap"), heapOverlap.getMessage());
            IllegalArgumentException length = assertThrows(IllegalArgumentException.class,
                    () -> c.allReduce(FloatBuffer.allocate(n), FloatBuffer.allocate(n + 1)));
            assertTrue(length.getMessage().contains("must be equal"), length.getMessage());
            assertThrows(IllegalArgumentException.class,
                    () -> c.allReduce(FloatBuffer.allocate(n), FloatBuffer.allocate(n).asReadOnlyBuffer()));
            // Refusals happen before anything is sent: the group still works.
            g.all((r, cc) -> {
                cc.allReduce(tensors[r]);
                return null;
            }, 60);
            assertEquals(expected[0] * 2, tensors[0].get(tensors[0].position()), 0f,
                    "the group kept working after refused calls");
        }
    }
}
