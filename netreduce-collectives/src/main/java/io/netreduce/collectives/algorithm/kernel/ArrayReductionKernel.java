package io.netreduce.collectives.algorithm.kernel;

import io.netreduce.collectives.ReduceOp;
import java.nio.ByteBuffer;
import java.nio.FloatBuffer;

/**
 * Reduction without the Vector API: in blocks through two small heap arrays. The bulk gets
 * and puts are memory copies, and the loop over arrays is the one shape C2 turns into SIMD
 * (over direct buffers it stays scalar). Each pair of blocks stays in L1.
 */
final class ArrayReductionKernel extends ReductionKernel {
    /** Elements per block: two blocks of 16 KiB fit a 32 KiB L1 data cache. */
    private static final int BLOCK = 4096;

    private final float[] a = new float[BLOCK];
    private final float[] b = new float[BLOCK];
    private FloatBuffer received;
    private FloatBuffer local;
    private FloatBuffer out;

    @Override
    public void bind(ByteBuffer received, ByteBuffer local, ByteBuffer out) {
        this.received = received.asFloatBuffer();
        this.local = received == local ? this.received : local.asFloatBuffer();
        this.out = out == local ? this.local : out.asFloatBuffer();
    }

    @Override
    public void apply(ReduceOp op, int r, int l, int o, int count) {
        for (int done = 0; done < count; done += BLOCK) {
            int m = Math.min(BLOCK, count - done);
            received.get(r + done, a, 0, m);
            local.get(l + done, b, 0, m);
            combine(op, m);
            out.put(o + done, a, 0, m);
        }
    }

    private void combine(ReduceOp op, int m) {
        float[] x = a;
        float[] y = b;
        switch (op) {
            case MAX -> {
                for (int i = 0; i < m; i++) {
                    x[i] = Math.max(x[i], y[i]);
                }
            }
            case MIN -> {
                for (int i = 0; i < m; i++) {
                    x[i] = Math.min(x[i], y[i]);
                }
            }
            default -> {
                for (int i = 0; i < m; i++) {
                    x[i] += y[i];
                }
            }
        }
    }
}
