package io.netreduce.netswitch.engine;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;

/**
 * A ring's rank buffers and sums as typed lanes: one array per buffer of MTU / 4 elements,
 * allocated at ring creation. Storing converts a packet's lanes from the ring's byte order
 * with one bulk copy through a typed view of the data plane's receive area (two through a
 * fixed staging view for a datagram anywhere else; no allocation, no per-element buffer
 * calls); summing runs rank-major over separate arrays, a loop the JIT vectorises, while
 * every lane still accumulates ((r0 + r1) + r2) + ... in rank order, so all runs and all
 * ranks get the same bits. FP32 adds IEEE floats; INT32 wraps like fixed-point switch
 * hardware. Used by the datapath thread only.
 *
 * <p>A packet position holds rank buffers only while it collects: its first store takes a
 * block of P buffers, its sum gives the block back. Free blocks are reused last in, first
 * out, so the next position collects into buffers that are still in the core's cache. Every
 * position can hold a block at once (the ring's reserved memory), but the ranks' packets of
 * one position arrive close together, so only a few blocks are in use at a time: the
 * buffers one message's sums touch fit in the L2 cache where slots × positions × P would
 * not (P = 4, window 4, 256 KiB messages at MTU 4096: 8 MiB).
 */
abstract class LaneStore {
    protected final int ranks;
    private final ByteOrder order;
    protected final byte[] stagingBytes;
    protected final ByteBuffer staging;
    /**
     * The sums, in the ring's byte order, written once by {@link #sum} and never again until
     * their slot is reused: direct memory, so that a socket can send a result where it lies.
     */
    protected final ByteBuffer results;
    /** Per packet position, the block of rank buffers it collects into, or -1. */
    private final int[] blockOf;
    /** Blocks no position holds, the one given back last on top. */
    private final int[] free;
    private int freeCount;
    /** The data plane's receive area, which lanes are copied out of through a view; null: none declared. */
    private ByteBuffer area;

    LaneStore(int positions, int ranks, int mtu, ByteOrder order, int resultBytes) {
        this.ranks = ranks;
        this.order = order;
        stagingBytes = new byte[mtu];
        staging = ByteBuffer.wrap(stagingBytes).order(order);
        results = ByteBuffer.allocateDirect(resultBytes).order(order);
        blockOf = new int[positions];
        java.util.Arrays.fill(blockOf, -1);
        free = new int[positions];
        for (int b = 0; b < positions; b++) {
            free[b] = positions - 1 - b; // block 0 on top
        }
        freeCount = positions;
    }

    /** The sums {@link #sum} writes; absolute accesses only. */
    ByteBuffer results() {
        return results;
    }

    /**
     * Declares the buffer the data plane receives every datagram into: lanes at a 4-byte
     * aligned offset of it are copied with one bulk copy through a view built here, once.
     */
    final void sourceArea(ByteBuffer area) {
        this.area = area;
        viewArea(area.duplicate().clear().order(order));
    }

    /**
     * Copies {@code bytes} bytes of lanes from {@code src} at {@code offset} into rank
     * {@code rank}'s buffer at packet position {@code position}, taking a block for the
     * position if it has none.
     */
    final void store(int position, int rank, ByteBuffer src, int offset, int bytes) {
        int block = blockOf[position];
        if (block < 0) {
            block = free[--freeCount];
            blockOf[position] = block;
        }
        int index = block * ranks + rank;
        if (src == area && (offset & 3) == 0) {
            copyFromArea(offset >>> 2, bytes >>> 2, index);
        } else {
            src.get(offset, stagingBytes, 0, bytes);
            copyFromStaging(bytes >>> 2, index);
        }
    }

    /**
     * Sums position {@code position}'s P rank buffers in rank order, writes the sum's
     * {@code bytes} bytes, in the ring's byte order, to {@link #results()} at
     * {@code resultOffset} (a multiple of 4), and gives the position's block back.
     */
    final void sum(int position, int bytes, int resultOffset) {
        int block = blockOf[position];
        sumBlock(block * ranks, bytes >>> 2, resultOffset >>> 2);
        release(position);
    }

    /** Gives back the block of a position that will not be summed (its slot is claimed again). */
    final void release(int position) {
        int block = blockOf[position];
        if (block >= 0) {
            blockOf[position] = -1;
            free[freeCount++] = block;
        }
    }

    /** Blocks in use (for tests). */
    final int blocksInUse() {
        return free.length - freeCount;
    }

    abstract void viewArea(ByteBuffer area);

    abstract void copyFromArea(int element, int count, int index);

    abstract void copyFromStaging(int count, int index);

    abstract void sumBlock(int first, int count, int resultElement);

    static final class Fp32 extends LaneStore {
        private final float[][] buffers;
        /** Where the running sum lies while one position is summed. */
        private final float[] acc;
        private final FloatBuffer view;
        private final FloatBuffer resultView;
        private FloatBuffer areaView;

        Fp32(int positions, int ranks, int mtu, ByteOrder order, int resultBytes) {
            super(positions, ranks, mtu, order, resultBytes);
            buffers = new float[positions * ranks][mtu / 4];
            acc = new float[mtu / 4];
            view = staging.asFloatBuffer();
            resultView = results.asFloatBuffer();
        }

        @Override
        void viewArea(ByteBuffer area) {
            areaView = area.asFloatBuffer();
        }

        @Override
        void copyFromArea(int element, int count, int index) {
            areaView.get(element, buffers[index], 0, count);
        }

        @Override
        void copyFromStaging(int count, int index) {
            view.get(0, buffers[index], 0, count);
        }

        @Override
        void sumBlock(int first, int n, int resultElement) {
            add(acc, buffers[first], buffers[first + 1], n);
            for (int r = 2; r < ranks; r++) {
                add(acc, buffers[first + r], n);
            }
            resultView.put(resultElement, acc, 0, n);
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
        private final int[] acc;
        private final IntBuffer view;
        private final IntBuffer resultView;
        private IntBuffer areaView;

        Int32(int positions, int ranks, int mtu, ByteOrder order, int resultBytes) {
            super(positions, ranks, mtu, order, resultBytes);
            buffers = new int[positions * ranks][mtu / 4];
            acc = new int[mtu / 4];
            view = staging.asIntBuffer();
            resultView = results.asIntBuffer();
        }

        @Override
        void viewArea(ByteBuffer area) {
            areaView = area.asIntBuffer();
        }

        @Override
        void copyFromArea(int element, int count, int index) {
            areaView.get(element, buffers[index], 0, count);
        }

        @Override
        void copyFromStaging(int count, int index) {
            view.get(0, buffers[index], 0, count);
        }

        @Override
        void sumBlock(int first, int n, int resultElement) {
            add(acc, buffers[first], buffers[first + 1], n);
            for (int r = 2; r < ranks; r++) {
                add(acc, buffers[first + r], n);
            }
            resultView.put(resultElement, acc, 0, n);
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
