package io.netreduce.collectives;

import io.netreduce.wire.ina.InaHeader;

import io.netreduce.collectives.algorithm.MessagePlan;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.util.Random;

/** Test tensors of the three kinds a user may pass, and the documented reference sums. */
public final class Tensors {
    public enum Kind {
        /** Direct, payload byte order: registered and used in place. */
        DIRECT,
        /** Heap: staged. */
        HEAP,
        /** Direct in the other byte order: staged. */
        DIRECT_OTHER_ORDER,
        /** From {@link Collectives#allocateTensor} (cache-line aligned): registered and used in place. */
        ALLOCATED
    }

    private Tensors() {
    }

    /** A tensor of n elements at position 3 of a larger buffer (to test offsets), filled from {@code values}. */
    public static FloatBuffer make(Kind kind, float[] values) {
        int n = values.length;
        FloatBuffer whole = switch (kind) {
            case DIRECT -> ByteBuffer.allocateDirect((n + 5) * 4).order(InaHeader.PAYLOAD_ORDER).asFloatBuffer();
            case HEAP -> FloatBuffer.allocate(n + 5);
            case ALLOCATED -> Collectives.allocateTensor(n + 5);
            case DIRECT_OTHER_ORDER -> ByteBuffer.allocateDirect((n + 5) * 4)
                    .order(InaHeader.PAYLOAD_ORDER == ByteOrder.BIG_ENDIAN ? ByteOrder.LITTLE_ENDIAN
                            : ByteOrder.BIG_ENDIAN).asFloatBuffer();
        };
        whole.put(0, 42f).put(1, 42f).put(2, 42f);
        whole.put(3, values);
        whole.put(n + 3, 42f).put(n + 4, 42f);
        return whole.position(3).limit(n + 3);
    }

    public static float[] random(Random random, int n) {
        float[] v = new float[n];
        for (int i = 0; i < n; i++) {
            v[i] = (float) (random.nextGaussian() * 100);
        }
        return v;
    }

    /** Integers in [-1000, 1000]: their float sums are exact in any order, for up to 16 000 ranks. */
    public static float[] integers(Random random, int n) {
        float[] v = new float[n];
        for (int i = 0; i < n; i++) {
            v[i] = random.nextInt(2001) - 1000;
        }
        return v;
    }

    /** The exact sum of every rank's tensor, computed in long arithmetic (for integer-valued tensors). */
    public static float[] exactSum(float[][] inputs) {
        float[] out = new float[inputs[0].length];
        for (int i = 0; i < out.length; i++) {
            long s = 0;
            for (float[] in : inputs) {
                s += (long) in[i];
            }
            out[i] = s;
        }
        return out;
    }

    /** netreduce: the switch sums in rank order, ((x0 + x1) + x2) + ... */
    public static float[] rankOrderSum(float[][] inputs) {
        int n = inputs[0].length;
        float[] out = inputs[0].clone();
        for (int r = 1; r < inputs.length; r++) {
            for (int i = 0; i < n; i++) {
                out[i] += inputs[r][i];
            }
        }
        return out;
    }

    /** ring: chunk c = [c·n/P, (c+1)·n/P) is summed starting at rank c: ((x_c + x_{c+1}) + ...) + x_{c-1}. */
    public static float[] ringOrderSum(float[][] inputs) {
        int p = inputs.length;
        return byChunk(inputs, (c, i) -> {
            float acc = inputs[c][i];
            for (int k = 1; k < p; k++) {
                acc += inputs[(c + k) % p][i];
            }
            return acc;
        });
    }

    private interface ChunkElement {
        float value(int chunk, int i);
    }

    /** Element i of chunk c = [c·n/P, (c+1)·n/P) is {@code f.value(c, i)}. */
    private static float[] byChunk(float[][] inputs, ChunkElement f) {
        int p = inputs.length;
        int n = inputs[0].length;
        float[] out = new float[n];
        for (int c = 0; c < p; c++) {
            int from = (int) ((long) c * n / p);
            int to = (int) ((long) (c + 1) * n / p);
            for (int i = from; i < to; i++) {
                out[i] = f.value(c, i);
            }
        }
        return out;
    }

    /**
     * The documented sum for a group with the default thresholds: netreduce's switch sums in
     * rank order; the ring reduces the gathered copies in rank order at or below the
     * small-tensor threshold (x_{P-1} + (... + (x_1 + x_0)), the same floats as rank order,
     * addition being commutative) or, where P is a power of two from 4, by recursive doubling
     * ({@link #treeSum}), takes the halving-doubling schedule above it up to its threshold
     * where P is a power of two from 4, and the pipelined ring's order beyond.
     */
    public static float[] expected(String algorithm, float[][] inputs) {
        return expected(algorithm, inputs, CommunicatorConfig.defaultSmallTensorBytes(inputs.length,
                CommunicatorConfig.DEFAULT_HALVING_DOUBLING_BYTES));
    }

    /** {@link #expected(String, float[][])} for a group whose small-tensor threshold is {@code smallTensorBytes}. */
    public static float[] expected(String algorithm, float[][] inputs, int smallTensorBytes) {
        return expected(algorithm, inputs, smallTensorBytes, CommunicatorConfig.DEFAULT_HALVING_DOUBLING_BYTES);
    }

    /** {@link #expected(String, float[][])} for the given small-tensor and halving-doubling thresholds. */
    public static float[] expected(String algorithm, float[][] inputs, int smallTensorBytes, int halvingDoublingBytes) {
        int p = inputs.length;
        long bytes = 4L * inputs[0].length;
        boolean partners = p >= 4 && Integer.bitCount(p) == 1 && halvingDoublingBytes >= 4;
        boolean small = bytes <= smallTensorBytes && bytes > 0;
        // Recursive doubling takes what a level-0 staging slot holds: n/P of the largest halving-doubling tensor, plus one.
        if (CommunicatorConfig.RING.equals(algorithm) && partners && small
                && bytes / 4 <= (long) (halvingDoublingBytes / 4) / p + 1) {
            return treeSum(inputs, 0, p);
        }
        if (!CommunicatorConfig.RING.equals(algorithm) || p == 1 || small) {
            return rankOrderSum(inputs);
        }
        boolean halvingDoubling = partners && bytes > 0 && bytes <= halvingDoublingBytes;
        return halvingDoubling ? halvingDoublingOrderSum(inputs) : ringOrderSum(inputs);
    }

    /** Recursive doubling's order: ranks [from, from + count) as t(lower half) + t(upper half), count a power of two. */
    public static float[] treeSum(float[][] inputs, int from, int count) {
        if (count == 1) {
            return inputs[from].clone();
        }
        float[] lower = treeSum(inputs, from, count / 2);
        float[] upper = treeSum(inputs, from + count / 2, count / 2);
        for (int i = 0; i < lower.length; i++) {
            lower[i] += upper[i];
        }
        return lower;
    }

    /**
     * Halving-doubling, P = 2^L: with p(r, -1) = x_r and p(r, k) = p(r ^ 2^(L-1-k), k-1) + p(r, k-1),
     * chunk c = [c·n/P, (c+1)·n/P) of the result is p(c, L-1).
     */
    public static float[] halvingDoublingOrderSum(float[][] inputs) {
        int levels = Integer.numberOfTrailingZeros(inputs.length);
        return byChunk(inputs, (c, i) -> partial(inputs, c, levels - 1, levels, i));
    }

    private static float partial(float[][] inputs, int r, int k, int levels, int i) {
        if (k < 0) {
            return inputs[r][i];
        }
        int partner = r ^ (1 << (levels - 1 - k));
        return partial(inputs, partner, k - 1, levels, i) + partial(inputs, r, k - 1, levels, i);
    }

    /** Null when {@code t}'s remaining elements equal {@code expected} bit for bit, else what differs. */
    public static String diff(FloatBuffer t, float[] expected) {
        if (t.remaining() != expected.length) {
            return "length " + t.remaining() + " != " + expected.length;
        }
        for (int i = 0; i < expected.length; i++) {
            float got = t.get(t.position() + i);
            if (Float.floatToRawIntBits(got) != Float.floatToRawIntBits(expected[i])) {
                return "element " + i + ": got " + got + ", expected " + expected[i];
            }
        }
        FloatBuffer whole = t.duplicate().clear();
        if (whole.get(t.position() - 1) != 42f || whole.get(t.limit()) != 42f) {
            return "wrote outside position..limit";
        }
        return null;
    }
}
