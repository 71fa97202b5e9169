package io.netreduce.collectives;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.FloatBuffer;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Reduce-scatter through real communicators: rank r receives chunk r of the reduction,
 * bit for bit in the documented order (ring: chunk c combined starting at rank c+1;
 * netreduce: rank order), with inputs left untouched, for several tensor kinds, and
 * interleaved with all-reduces so each one's look-ahead receive meets the other kind.
 */
@Timeout(120)
class ReduceScatterTest {
    private static final int M = 2 * TestGroup.MESSAGE_BYTES / 4 + 3;

    @ParameterizedTest(name = "{0} P={1} {2}")
    @CsvSource({"ring,2,SUM", "ring,3,SUM", "ring,4,SUM", "ring,3,MAX", "ring,3,AVG", "netreduce,3,SUM",
            "netreduce,2,AVG", "ring,1,SUM"})
    void everyRankGetsItsChunkOfTheReduction(String requested, int p, ReduceOp op) throws Exception {
        long seed = 4242L + 31L * p + op.ordinal() + requested.hashCode();
        Random random = new Random(seed);
        try (TestGroup g = TestGroup.open(p, requested)) {
            String algorithm = g.comms.get(0).algorithm();
            for (int round = 0; round < 4; round++) {
                float[][] values = new float[p][];
                FloatBuffer[] inputs = new FloatBuffer[p];
                FloatBuffer[] outputs = new FloatBuffer[p];
                float[][] sums = new float[p][];
                FloatBuffer[] sumTensors = new FloatBuffer[p];
                int n = 1 + random.nextInt(2 * M);
                for (int r = 0; r < p; r++) {
                    values[r] = Tensors.random(random, p * M);
                    Tensors.Kind inKind = Tensors.Kind.values()[(round + r) % Tensors.Kind.values().length];
                    FloatBuffer in = Tensors.make(inKind, values[r]);
                    inputs[r] = round == 3 ? in.asReadOnlyBuffer() : in;
                    outputs[r] = Tensors.make(round % 2 == 0 ? Tensors.Kind.DIRECT : Tensors.Kind.HEAP,
                            Tensors.random(random, M));
                    sums[r] = Tensors.random(random, n);
                    sumTensors[r] = Tensors.make(Tensors.Kind.DIRECT, sums[r]);
                }
                g.all((r, c) -> {
                    c.reduceScatter(inputs[r], outputs[r], op);
                    c.allReduce(sumTensors[r]);
                    return null;
                }, 60);
                float[] expectedSum = Tensors.expected(algorithm, sums);
                for (int r = 0; r < p; r++) {
                    String what = "seed " + seed + " round " + round + " " + algorithm + " " + op + " rank " + r;
                    assertNull(Tensors.diff(outputs[r], expectedChunk(algorithm, values, r, op)), what);
                    assertNull(Tensors.diff(inputs[r], values[r]), what + ": input changed");
                    assertNull(Tensors.diff(sumTensors[r], expectedSum), what + ": the all-reduce after it");
                }
            }
        }
    }

    /** Chunk r of the reduction in the algorithm's documented order. */
    private static float[] expectedChunk(String algorithm, float[][] values, int r, ReduceOp op) {
        int p = values.length;
        float[] out = new float[M];
        for (int i = 0; i < M; i++) {
            int at = r * M + i;
            // ring: starts at rank r+1 and ends with rank r; netreduce: rank order.
            int first = CommunicatorConfig.RING.equals(algorithm) ? (r + 1) % p : 0;
            float acc = values[first][at];
            for (int k = 1; k < p; k++) {
                float x = values[(first + k) % p][at];
                acc = op == ReduceOp.MAX ? Math.max(acc, x) : op == ReduceOp.MIN ? Math.min(acc, x) : acc + x;
            }
            out[i] = op == ReduceOp.AVG ? acc / p : acc;
        }
        return out;
    }

    @Test
    void lengthsThatDoNotSplitIntoRanksAreRefused() throws Exception {
        try (TestGroup g = TestGroup.open(2, "ring")) {
            Communicator c = g.comms.get(0);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> c.reduceScatter(FloatBuffer.allocate(11), FloatBuffer.allocate(5)));
            assertTrue(e.getMessage().contains("size × output"), e.getMessage());
            assertThrows(IllegalArgumentException.class,
                    () -> c.reduceScatter(FloatBuffer.allocate(10), FloatBuffer.allocate(5).asReadOnlyBuffer()));
        }
    }
}
