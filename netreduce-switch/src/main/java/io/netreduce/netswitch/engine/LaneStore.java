package io.netreduce.netswitch.engine;

import io.netreduce.wire.udp.AddressCache;
import io.netreduce.wire.udp.NativeUdp;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A ring's packet positions' sums, every lane accumulated ((r0 + r1) + r2) + ... in rank
 * order, so that all runs and all ranks get the same bits. FP32 adds IEEE floats; INT32
 * wraps like fixed-point switch hardware. Used by the datapath thread only.
 *
 * <p>Each rank's packet of a position comes to {@link #store} once (the ring does not read a
 * duplicate again) and the ring calls {@link #sum} when every rank's has come. Two ways:
 * <ul>
 *   <li>{@link Accumulating} (where the native library loads and the ring's byte order is the
 *       machine's): a packet whose lower ranks are all in the sum is added into it where it
 *       was received, natively ({@link NativeUdp#addFloats}); one that came before a lower
 *       rank's is held in a rank buffer and added once they have. Rank 0's is copied in.</li>
 *   <li>{@link Fp32} and {@link Int32} (Java): every packet is copied into its rank buffer,
 *       converting the ring's byte order with one bulk copy, and {@link #sum} adds the
 *       buffers rank-major, a loop the JIT vectorises.</li>
 * </ul>
 * The sums land in {@link #results()}, direct memory in the ring's byte order that a socket
 * sends from where it lies, written by nothing else until their slot is reused.
 *
 * <p>A packet position holds rank buffers only while it needs them: its first held packet
 * takes a block of P buffers, its sum (or release) gives the block back. Free blocks are
 * reused last in, first out, so the next position collects into buffers that are still in
 * the core's cache. Every position can hold a block at once (the ring's reserved memory),
 * but the ranks' packets of one position arrive close together, so only a few blocks are in
 * use at a time: the buffers one message's sums touch fit in the L2 cache where slots ×
 * positions × P would not (P = 4, window 4, 256 KiB messages at MTU 4096: 8 MiB).
 */
abstract class LaneStore {
    /** System property: {@code false} keeps the Java path where the native one could run (for A/B measurements). */
    static final String ACCUMULATE_PROPERTY = "netreduce.switch.accumulate";
    private static final Logger LOG = LoggerFactory.getLogger(LaneStore.class);

    protected final int ranks;
    protected final int mtu;
    /** The sums, in the ring's byte order: direct, so that a socket can send a result where it lies. */
    protected final ByteBuffer results;
    /** Per packet position, the block of rank buffers it holds, or -1. */
    private final int[] blockOf;
    /** Blocks no position holds, the one given back last on top. */
    private final int[] free;
    private int freeCount;

    LaneStore(int positions, int ranks, int mtu, ByteOrder order, int resultBytes) {
        this.ranks = ranks;
        this.mtu = mtu;
        results = ByteBuffer.allocateDirect(resultBytes).order(order);
        blockOf = new int[positions];
        java.util.Arrays.fill(blockOf, -1);
        free = new int[positions];
        for (int b = 0; b < positions; b++) {
            free[b] = positions - 1 - b; // block 0 on top
        }
        freeCount = positions;
    }

    /** The fastest lane store this process can run for a ring of this element type and byte order. */
    static LaneStore create(boolean fp32, int positions, int ranks, int mtu, ByteOrder order, int resultBytes) {
        // One direct buffer holds the rank buffers: a ring whose rank buffers pass 2 GiB keeps heap arrays.
        boolean fits = (long) positions * ranks * mtu <= Integer.MAX_VALUE;
        if (Choice.ACCUMULATING && order == ByteOrder.nativeOrder() && fits) {
            return new Accumulating(fp32, positions, ranks, mtu, resultBytes);
        }
        return fp32 ? new Fp32(positions, ranks, mtu, order, resultBytes)
                : new Int32(positions, ranks, mtu, order, resultBytes);
    }

    /** The choice, made and logged once per process. */
    private static final class Choice {
        static final boolean ACCUMULATING = choose();

        private static boolean choose() {
            if ("false".equals(System.getProperty(ACCUMULATE_PROPERTY))) {
                LOG.info("switch lanes: each packet copied into its rank buffer, summed in Java ({}=false)",
                        ACCUMULATE_PROPERTY);
                return false;
            }
            if (!NativeUdp.available()) {
                LOG.info("switch lanes: each packet copied into its rank buffer, summed in Java "
                        + "(no native library: {})", NativeUdp.unavailableReason());
                return false;
            }
            LOG.info("switch lanes: added into the sums natively as they arrive in rank order "
                    + "(rings in the machine's byte order)");
            return true;
        }
    }

    /** The sums {@link #sum} completes; absolute accesses only. */
    final ByteBuffer results() {
        return results;
    }

    /**
     * Declares the buffer the data plane receives every datagram into, which most packets
     * come in (the Java path copies out of it through a view built once).
     */
    void sourceArea(ByteBuffer area) {
    }

    /**
     * Takes rank {@code rank}'s {@code bytes} bytes of lanes from {@code src} at {@code offset}
     * for packet position {@code position}, whose sum goes to {@link #results()} at
     * {@code resultOffset} (a multiple of 4). Once per rank and position until the position
     * is summed or released. True if the lanes were copied into a rank buffer, false if they
     * were added into the sum where they lie.
     */
    abstract boolean store(int position, int rank, ByteBuffer src, int offset, int bytes, int resultOffset);

    /**
     * Completes position {@code position}'s sum of {@code bytes} bytes at {@code resultOffset}
     * once every rank's packet is stored, and gives its block back.
     */
    abstract void sum(int position, int bytes, int resultOffset);

    /** Gives back what a position holds: it will not be summed (its slot is claimed again), or it was. */
    void release(int position) {
        int block = blockOf[position];
        if (block >= 0) {
            blockOf[position] = -1;
            free[freeCount++] = block;
        }
    }

    /** The position's block of rank buffers, taken if it has none. */
    protected final int block(int position) {
        int block = blockOf[position];
        if (block < 0) {
            block = free[--freeCount];
            blockOf[position] = block;
        }
        return block;
    }

    /** Blocks in use (for tests). */
    final int blocksInUse() {
        return free.length - freeCount;
    }

    /**
     * Adds each packet into the sum as soon as every lower rank's is in it, natively, where
     * the packet lies; holds a packet that came before a lower rank's in its rank buffer and
     * adds it once they are in. Per position: how many ranks are in the sum (all of ranks
     * 0..added-1) and which higher ones are held. So after every packet, {@code added} is the
     * lowest rank not yet come, and the sum is complete when the last rank's packet comes.
     */
    static final class Accumulating extends LaneStore {
        private final boolean fp32;
        /** Rank buffers: block b's rank r at {@code (b * ranks + r) * mtu}. */
        private final ByteBuffer held;
        private final long heldAddress;
        private final long resultsAddress;
        private final int[] added;
        private final long[] waiting;
        /** A packet in a heap buffer is copied here first: native adds read direct memory. */
        private final ByteBuffer scratch;
        private final long scratchAddress;
        private final AddressCache addresses = new AddressCache();

        Accumulating(boolean fp32, int positions, int ranks, int mtu, int resultBytes) {
            super(positions, ranks, mtu, ByteOrder.nativeOrder(), resultBytes);
            this.fp32 = fp32;
            held = ByteBuffer.allocateDirect(positions * ranks * mtu);
            heldAddress = NativeUdp.address(held);
            resultsAddress = NativeUdp.address(results);
            scratch = ByteBuffer.allocateDirect(mtu);
            scratchAddress = NativeUdp.address(scratch);
            added = new int[positions];
            waiting = new long[positions];
        }

        @Override
        boolean store(int position, int rank, ByteBuffer src, int offset, int bytes, int resultOffset) {
            int next = added[position];
            if (rank != next) {
                // A lower rank's packet has not come: hold this one until it has.
                held.put((block(position) * ranks + rank) * mtu, src, offset, bytes);
                waiting[position] |= 1L << rank;
                return true;
            }
            long sum = resultsAddress + resultOffset;
            int lanes = bytes >>> 2;
            if (rank == 0) {
                results.put(resultOffset, src, offset, bytes);
            } else {
                add(sum, addressOf(src, offset, bytes), lanes);
            }
            next++;
            long w = waiting[position];
            if (w != 0) {
                long base = heldAddress + (long) block(position) * ranks * mtu;
                while (next < ranks && (w & (1L << next)) != 0) {
                    add(sum, base + (long) next * mtu, lanes);
                    next++;
                }
                if (next == ranks || (w >>> next) == 0) {
                    waiting[position] = 0;
                    super.release(position); // nothing held any more
                }
            }
            added[position] = next;
            return false;
        }

        private long addressOf(ByteBuffer src, int offset, int bytes) {
            if (src.isDirect()) {
                return addresses.of(src) + offset;
            }
            scratch.put(0, src, offset, bytes);
            return scratchAddress;
        }

        private void add(long sum, long lanesAt, int count) {
            if (fp32) {
                NativeUdp.addFloats(sum, lanesAt, count);
            } else {
                NativeUdp.addInts(sum, lanesAt, count);
            }
        }

        @Override
        void sum(int position, int bytes, int resultOffset) {
            // Every rank's packet is in the sum already: the last one to come was the lowest missing.
            if (added[position] != ranks) {
                // Never a partial sum sent as a result (the ring stores each rank once; this would be a bug).
                throw new IllegalStateException("position " + position + " has " + added[position] + " of " + ranks
                        + " ranks in its sum");
            }
            release(position);
        }

        @Override
        void release(int position) {
            added[position] = 0;
            waiting[position] = 0;
            super.release(position);
        }
    }

    /** The Java path: copies every packet into its rank buffer and sums them when the position is complete. */
    private abstract static class Staged extends LaneStore {
        private final ByteOrder order;
        protected final byte[] stagingBytes;
        protected final ByteBuffer staging;
        /** The data plane's receive area, which lanes are copied out of through a view; null: none declared. */
        private ByteBuffer area;

        Staged(int positions, int ranks, int mtu, ByteOrder order, int resultBytes) {
            super(positions, ranks, mtu, order, resultBytes);
            this.order = order;
            stagingBytes = new byte[mtu];
            staging = ByteBuffer.wrap(stagingBytes).order(order);
        }

        @Override
        final void sourceArea(ByteBuffer area) {
            this.area = area;
            viewArea(area.duplicate().clear().order(order));
        }

        @Override
        final boolean store(int position, int rank, ByteBuffer src, int offset, int bytes, int resultOffset) {
            int index = block(position) * ranks + rank;
            if (src == area && (offset & 3) == 0) {
                copyFromArea(offset >>> 2, bytes >>> 2, index);
            } else {
                src.get(offset, stagingBytes, 0, bytes);
                copyFromStaging(bytes >>> 2, index);
            }
            return true;
        }

        @Override
        final void sum(int position, int bytes, int resultOffset) {
            sumBlock(block(position) * ranks, bytes >>> 2, resultOffset >>> 2);
            release(position);
        }

        abstract void viewArea(ByteBuffer area);

        abstract void copyFromArea(int element, int count, int index);

        abstract void copyFromStaging(int count, int index);

        abstract void sumBlock(int first, int count, int resultElement);
    }

    static final class Fp32 extends Staged {
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

    static final class Int32 extends Staged {
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
