package io.netreduce.cli.allreduce;

import java.nio.FloatBuffer;

/**
 * Inputs and the exact expected sum. Rank r's element i is (r+1)·(i mod 97) + (i mod 13):
 * small integers, different on every rank and along the tensor, whose sums stay far below
 * 2^24, so float addition is exact in any order and a result is either bit-exact or wrong.
 */
public final class Reference {
    private Reference() {
    }

    public static float input(int rank, int i) {
        return (rank + 1) * (i % 97) + (i % 13);
    }

    /** The sum over ranks 0..P-1 of {@link #input}. */
    public static float expected(int worldSize, int i) {
        return (float) ((i % 97) * (worldSize * (worldSize + 1) / 2) + worldSize * (i % 13));
    }

    /** Fills elements [0, count) with this rank's input. */
    public static void fill(FloatBuffer b, int rank, int count) {
        for (int i = 0; i < count; i++) {
            b.put(i, input(rank, i));
        }
    }

    /** Elements in [0, count) that differ from the expected sum. */
    public static long countWrong(FloatBuffer b, int worldSize, int count) {
        long wrong = 0;
        for (int i = 0; i < count; i++) {
            if (Float.floatToRawIntBits(b.get(i)) != Float.floatToRawIntBits(expected(worldSize, i))) {
                wrong++;
            }
        }
        return wrong;
    }
}
