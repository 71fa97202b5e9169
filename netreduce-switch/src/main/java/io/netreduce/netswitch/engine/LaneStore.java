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
    /**
     * The sums, in the ring's byte order, written once by {@link #sum} and never again until
     * their slot is reused: direct memory, so that a socket can send a result where it lies.
     */
    protected final ByteBuffer results;

    LaneStore(int mtu, ByteOrder order, int resultBytes) {
        stagingBytes = new byte[mtu];
        staging = ByteBuffer.wrap(stagingBytes).order(order);
        results = ByteBuffer.allocateDirect(resultBytes).order(order);
    }

    /** The sums {@link #sum} writes; absolute accesses only. */
    ByteBuffer results() {
        return results;
    }

    /** Copies {@code bytes} bytes of lanes from {@code src} at {@code offset} into buffer {@code index}. */
    abstract void store(ByteBuffer src, int offset, int bytes, int index);

    /**
     * Sums buffers {@code first .. first + ranks - 1} into buffer {@code first + ranks} and writes the sum's
     * {@code bytes} bytes, in the ring's byte order, to {@link #results()} at {@code resultOffset} (a multiple of 4).
     */
    abstract void sum(int first, int ranks, int bytes, int resultOffset);

    static final class Fp32 extends LaneStore {
        private final float[][] buffers;
        private final FloatBuffer view;

        private final FloatBuffer resultView;

        Fp32(int count, int mtu, ByteOrder order, int resultBytes) {
            super(mtu, order, resultBytes);
            buffers = new float[count][mtu / 4];
            view = staging.asFloatBuffer();
            resultView = results.asFloatBuffer();
        }

        @Override
        void store(ByteBuffer src, int offset, int bytes, int index) {
            src.get(offset, stagingBytes, 0, bytes);
            view.get(0, buffers[index], 0, bytes >>> 2);
        }

        @Override
        void sum(int first, int ranks, int bytes, int resultOffset) {
            int n = bytes >>> 2;
            if (ranks == 1) {
                resultView.put(resultOffset >>> 2, buffers[first], 0, n);
                return;
            }
            float[] acc = buffers[first + ranks];
            add(acc, buffers[first], buffers[first + 1], n);
            for (int r = 2; r < ranks; r++) {
                add(acc, buffers[first + r], n);
            }
            resultView.put(resultOffset >>> 2, acc, 0, n);
        }

        private static void add(float[] acc, float[] a, float[] b, int n) {
            for (int i = 0; i < n; i++) {
                acc[i] = a[i] + b[i];
            }
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

        private final IntBuffer resultView;

        Int32(int count, int mtu, ByteOrder order, int resultBytes) {
            super(mtu, order, resultBytes);
            buffers = new int[count][mtu / 4];
            view = staging.asIntBuffer();
            resultView = results.asIntBuffer();
        }

        @Override
        void store(ByteBuffer src, int offset, int bytes, int index) {
            src.get(offset, stagingBytes, 0, bytes);
            view.get(0, buffers[index], 0, bytes >>> 2);
        }

        @Override
        void sum(int first, int ranks, int bytes, int resultOffset) {
            int n = bytes >>> 2;
            if (ranks == 1) {
                resultView.put(resultOffset >>> 2, buffers[first], 0, n);
                return;
            }
            int[] acc = buffers[first + ranks];
            add(acc, buffers[first], buffers[first + 1], n);
            for (int r = 2; r < ranks; r++) {
                add(acc, buffers[first + r], n);
            }
            resultView.put(resultOffset >>> 2, acc, 0, n);
        }

        private static void add(int[] acc, int[] a, int[] b, int n) {
            for (int i = 0; i < n; i++) {
                acc[i] = a[i] + b[i];
            }
        }

        private static void add(int[] acc, int[] b, int n) {
            for (int i = 0; i < n; i++) {
                acc[i] += b[i];
            }
        }
    }
}
