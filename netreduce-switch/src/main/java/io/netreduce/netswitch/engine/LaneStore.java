package io.netreduce.netswitch.engine;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;

/**
 * A ring's rank buffers and sums as typed lanes: one array per buffer of MTU / 4 elements,
 * allocated at ring creation. Storing converts a packet's lanes from the ring's byte order
 * with two bulk copies through a fixed staging view (no allocation, no per-element buffer
 * calls); summing runs rank-major over separate arrays, a loop the JIT vectorises, while
 * every lane still accumulates ((r0 + r1) + r2) + ... in rank order, so all runs and all
 * ranks get the same bits. FP32 adds IEEE floats; INT32 wraps like fixed-point switch
 * hardware. Used by the datapath thread only.
 */
abstract class LaneStore {
    protected final byte[] stagingBytes;
    protected final ByteBuffer staging;

    LaneStore(int mtu, ByteOrder order) {
        stagingBytes = new byte[mtu];
        staging = ByteBuffer.wrap(stagingBytes).order(order);
    }

    /** Copies {@code bytes} bytes of lanes from {@code src} at {@code offset} into buffer {@code index}. */
    abstract void store(ByteBuffer src, int offset, int bytes, int index);

    /**
     * Sums buffers {@code first .. first + ranks - 1} into buffer {@code first + ranks} and writes the sum's
     * {@code bytes} bytes, in the ring's byte order, to {@code out[outOffset ..]}.
     */
    abstract void sum(int first, int ranks, int bytes, byte[] out, int outOffset);

    static final class Fp32 extends LaneStore {
        private final float[][] buffers;
        private final FloatBuffer view;

        Fp32(int count, int mtu, ByteOrder order) {
            super(mtu, order);
            buffers = new float[count][mtu / 4];
            view = staging.asFloatBuffer();
        }

        @Override
        void store(ByteBuffer src, int offset, int bytes, int index) {
            src.get(offset, stagingBytes, 0, bytes);
            view.get(0, buffers[index], 0, bytes >>> 2);
        }

        @Override
        void sum(int first, int ranks, int bytes, byte[] out, int outOffset) {
            int n = bytes >>> 2;
            float[] acc = buffers[first + ranks];
            System.arraycopy(buffers[first], 0, acc, 0, n);
            for (int r = 1; r < ranks; r++) {
                add(acc, buffers[first + r], n);
            }
            view.put(0, acc, 0, n);
            System.arraycopy(stagingBytes, 0, out, outOffset, bytes);
        }

        private static void add(float[] acc, float[] b, int n) {
            for (int i = 0; i < n; i++) {
                acc[i] += b[i];
            }
        }
    }

    static final class Int32 extends LaneStore {
        private final int[][] buffers;
        private final IntBuffer view;

        Int32(int count, int mtu, ByteOrder order) {
            super(mtu, order);
            buffers = new int[count][mtu / 4];
            view = staging.asIntBuffer();
        }

        @Override
        void store(ByteBuffer src, int offset, int bytes, int index) {
            src.get(offset, stagingBytes, 0, bytes);
            view.get(0, buffers[index], 0, bytes >>> 2);
        }

        @Override
        void sum(int first, int ranks, int bytes, byte[] out, int outOffset) {
            int n = bytes >>> 2;
            int[] acc = buffers[first + ranks];
            System.arraycopy(buffers[first], 0, acc, 0, n);
            for (int r = 1; r < ranks; r++) {
                add(acc, buffers[first + r], n);
            }
            view.put(0, acc, 0, n);
            System.arraycopy(stagingBytes, 0, out, outOffset, bytes);
        }

        private static void add(int[] acc, int[] b, int n) {
            for (int i = 0; i < n; i++) {
                acc[i] += b[i];
            }
        }
    }
}
