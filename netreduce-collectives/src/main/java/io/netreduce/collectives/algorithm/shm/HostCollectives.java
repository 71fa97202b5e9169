package io.netreduce.collectives.algorithm.shm;

import io.netreduce.collectives.Collective;
import io.netreduce.collectives.ReduceOp;
import io.netreduce.collectives.algorithm.CallMismatchException;
import io.netreduce.collectives.algorithm.CollectiveCall;
import io.netreduce.collectives.algorithm.DirectBuffers;
import io.netreduce.collectives.algorithm.GroupContext;
import io.netreduce.collectives.algorithm.HostLayout;
import io.netreduce.collectives.algorithm.HostTimeoutException;
import io.netreduce.collectives.algorithm.kernel.ReductionKernel;
import io.netreduce.verbs.support.AdaptiveSpin;
import io.netreduce.verbs.support.HostCores;
import io.netreduce.wire.ina.InaHeader;
import java.nio.ByteBuffer;
import java.nio.FloatBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.locks.LockSupport;

/**
 * The collectives among the ranks of one host, through shared memory: each rank owns a
 * {@link SharedSegment} that every other rank of the host maps.
 *
 * <p>A tensor of N elements is cut into n chunks, one per local rank (chunk l starts at
 * {@code l·N/n}); local rank l reduces chunk l. Chunks go through in pieces of at most
 * {@link #pieceBytes}, one piece of every chunk per <em>step</em>, so that what one rank
 * writes is still in cache when the others read it. A step uses one of {@link #SLOTS} slots
 * of every segment, n areas of one piece each: area a ≠ l of rank l's slot holds rank l's
 * piece of chunk a for rank a to reduce; area l holds rank l's reduced piece for the others
 * to copy. Per step, rank l
 * <ol>
 *   <li>waits until every peer is done with the slot's previous step ({@code GATHERED}),
 *       copies its pieces of the other chunks in, writes its call beside them and advances
 *       {@code WRITTEN};</li>
 *   <li>waits for every peer's {@code WRITTEN}, compares their calls with its own (a
 *       mismatch fails here, before any peer's data is used), and reduces its own piece with
 *       the peers' into area l, in local-rank order; advances {@code REDUCED};</li>
 *   <li>waits for every peer's {@code REDUCED}, copies their reduced pieces to its output,
 *       and advances {@code GATHERED}.</li>
 * </ol>
 * Each chunk is reduced once, by one rank, and copied by the others, so every rank gets the
 * same bits. The counters count steps since the group was formed and only grow, so no step's
 * signal can be mistaken for another's. Reduce-scatter runs steps 1 and 2 into the caller's
 * chunk, all-gather steps 1 (its chunk into area l) and 3.
 *
 * <p>Waits spin briefly (yielding the core where the host's ranks outnumber its cores), then
 * sleep in short naps; each checks the progress guard about every millisecond, so a failure
 * elsewhere (a rank killed, reported by the rendezvous store) ends it, and gives up after the
 * group's timeout naming the rank it waited for.
 */
public final class HostCollectives implements AutoCloseable {
    /**
     * Bytes of one piece unless the system property {@value #PIECE_PROPERTY} says otherwise:
     * 4 MiB / n within 256 KiB–1 MiB. Measured at 64 MiB (docs/benchmarks.md): 64 KiB pieces
     * ran at a third of 1 MiB's busbw at P = 2, the waits of many short steps dominating; 1, 2
     * and 4 MiB were level. The bound keeps a host's segments at 16 × n MiB or less.
     */
    static int pieceBytes(int n) {
        Integer set = Integer.getInteger(PIECE_PROPERTY);
        int bytes = set != null ? set : Math.max(256 * 1024, Math.min(1 << 20, (4 << 20) / n));
        return Math.max(4096, bytes) & ~63;
    }

    static final String PIECE_PROPERTY = "netreduce.shm.pieceBytes";
    /** Steps a rank may run ahead of the slowest peer of its host (4 measured ahead of 2 at P = 4). */
    static final int SLOTS = 4;
    /** Where segments live unless the system property {@value #DIR_PROPERTY} says otherwise. */
    static final String DEFAULT_DIR = "/dev/shm";
    static final String DIR_PROPERTY = "netreduce.shm.dir";

    // Segment layout: counters on cache lines of their own, the slots' calls, then the data.
    private static final int MAGIC = 0;
    private static final int WRITTEN = 64;
    private static final int REDUCED = 128;
    private static final int GATHERED = 192;
    private static final int CALLS = 256;
    private static final int CALL_BYTES = 32;
    private static final int DATA = 4096;
    private static final long MAGIC_VALUE = 0x6e65747265647563L; // "netreduc"
    private static final long NAP_NANOS = 50_000;
    private static final long CHECK_NANOS = 1_000_000;

    private final int rank;
    private final int host;
    private final int local;
    private final int n;
    private final HostLayout layout;
    private final SharedSegment[] segments;
    private final ByteBuffer[] bytes;
    private final FloatBuffer[] floats;
    private final ReductionKernel kernel = ReductionKernel.create();
    private final AdaptiveSpin spin;
    private final long timeoutNanos;
    private final int pieceBytes;
    private long steps;
    /** The last direct input's memory and a view of it in the payload order, reused while the input is. */
    private ByteBuffer inputRoot;
    private ByteBuffer inputView;

    private enum Mode { ALL_REDUCE, REDUCE_SCATTER, ALL_GATHER }

    private HostCollectives(GroupContext g, SharedSegment[] segments, long spinNanos) {
        this.layout = g.hosts();
        this.rank = g.config().rank();
        this.host = layout.host(rank);
        this.local = layout.localRank(rank);
        this.n = layout.localSize(rank);
        this.segments = segments;
        this.bytes = new ByteBuffer[n];
        this.floats = new FloatBuffer[n];
        for (int q = 0; q < n; q++) {
            bytes[q] = segments[q].buffer().duplicate().order(InaHeader.PAYLOAD_ORDER);
            floats[q] = bytes[q].asFloatBuffer();
        }
        this.spin = new AdaptiveSpin(spinNanos, n > HostCores.count());
        this.timeoutNanos = g.timeout().toNanos();
        this.pieceBytes = pieceBytes(n);
    }

    /** Bytes of each rank's segment for {@code n} ranks on the host. */
    static int segmentBytes(int n) {
        return DATA + SLOTS * n * pieceBytes(n);
    }

    /** The directory segments are created in. */
    public static Path directory() {
        return Path.of(System.getProperty(DIR_PROPERTY, DEFAULT_DIR));
    }

    /**
     * Forms the group of this rank's host: every local rank creates its segment and publishes
     * its name, maps every peer's, and removes its own name once all have mapped it.
     */
    public static HostCollectives join(GroupContext g) {
        HostLayout layout = g.hosts();
        int me = g.config().rank();
        int host = layout.host(me);
        int local = layout.localRank(me);
        int n = layout.localSize(me);
        int size = segmentBytes(n);
        SharedSegment[] segments = new SharedSegment[n];
        try {
            SharedSegment own = SharedSegment.create(directory(), size);
            segments[local] = own;
            own.buffer().putLong(MAGIC, MAGIC_VALUE);
            g.publish(segmentKey(host, local), own.path().toString());
            for (int q = 0; q < n; q++) {
                if (q != local) {
                    segments[q] = SharedSegment.open(Path.of(g.await(segmentKey(host, q))), size);
                    if (segments[q].buffer().getLong(MAGIC) != MAGIC_VALUE) {
                        throw new IllegalStateException("shared-memory segment " + segments[q].path()
                                + " of rank " + layout.rankAt(host, q) + " is not initialised");
                    }
                }
            }
            g.publish(segmentKey(host, local) + "/mapped", "yes");
            for (int q = 0; q < n; q++) {
                if (q != local) {
                    g.await(segmentKey(host, q) + "/mapped");
                }
            }
            own.unlink();
            return new HostCollectives(g, segments, 50_000);
        } catch (RuntimeException e) {
            closeAll(segments);
            throw e;
        }
    }

    private static String segmentKey(int host, int local) {
        return "shm/" + host + "/" + local;
    }

    /** Ranks in this host's group. */
    public int size() {
        return n;
    }

    public int localRank() {
        return local;
    }

    /** Where chunk {@code part} of {@code count} elements cut into {@code parts} starts. */
    public static int chunkStart(int count, int parts, int part) {
        return (int) ((long) part * count / parts);
    }

    /** This rank's chunk of a tensor of {@code count} elements: its length. */
    public int chunkLength(int count) {
        return chunkStart(count, n, local + 1) - chunkStart(count, n, local);
    }

    /** Reduces every local rank's {@code input} into every local rank's {@code output}. */
    public void allReduce(CollectiveCall call, FloatBuffer input, FloatBuffer output) {
        run(Mode.ALL_REDUCE, call, input, null, output, output.remaining());
    }

    /** Reduces every local rank's {@code input} and leaves this rank's chunk of the result in {@code chunk}. */
    public void reduceScatter(CollectiveCall call, FloatBuffer input, FloatBuffer chunk) {
        run(Mode.REDUCE_SCATTER, call, input, chunk, null, input.remaining());
    }

    /** Every local rank's {@code chunk} into {@code output} at the chunk's place. */
    public void allGather(CollectiveCall call, FloatBuffer chunk, FloatBuffer output) {
        run(Mode.ALL_GATHER, call, null, chunk, output, output.remaining());
    }

    private void run(Mode mode, CollectiveCall call, FloatBuffer in, FloatBuffer chunk, FloatBuffer out, int count) {
        int piece = pieceBytes / 4;
        int longest = chunkStart(count, n, 1); // chunk 0 is the shortest; the last the longest
        longest = Math.max(longest, count - chunkStart(count, n, n - 1));
        int stepsInCall = Math.max(1, (longest + piece - 1) / piece);
        ReduceOp op = call.combine();
        ByteBuffer direct = null;
        int directBase = 0;
        if (in != null && in.order() == InaHeader.PAYLOAD_ORDER) {
            DirectBuffers.Root root = DirectBuffers.root(in);
            if (root != null && root.byteOffset() % 4 == 0) {
                if (root.buffer() != inputRoot) {
                    inputRoot = root.buffer();
                    inputView = inputRoot.duplicate().order(InaHeader.PAYLOAD_ORDER);
                }
                direct = inputView;
                directBase = (int) (root.byteOffset() / 4) + in.position();
            }
        }
        for (int k = 0; k < stepsInCall; k++) {
            long t = steps++;
            int slot = (int) (t % SLOTS);
            int base = (DATA + slot * n * pieceBytes) / 4; // the slot's first element
            int from = k * piece;
            awaitPeers(GATHERED, t - SLOTS + 1, call, "to finish with step " + (t - SLOTS + 1));
            if (mode != Mode.ALL_GATHER) {
                for (int a = 0; a < n; a++) {
                    int len = pieceLength(count, a, from, piece);
                    if (len > 0 && (a != local || direct == null)) {
                        floats[local].put(base + a * piece, in, in.position() + chunkStart(count, n, a) + from, len);
                    }
                }
                writeCall(slot, call);
                segments[local].setRelease(WRITTEN, t + 1);
                awaitPeers(WRITTEN, t + 1, call, "to write step " + (t + 1));
                checkCalls(slot, call);
                int len = pieceLength(count, local, from, piece);
                int mine = base + local * piece;
                if (len > 0) {
                    // The own piece is read where it is when the input is direct (no copy into the slot).
                    ByteBuffer acc = direct == null ? bytes[local] : direct;
                    int accAt = direct == null ? mine : directBase + chunkStart(count, n, local) + from;
                    for (int q = 0; q < n; q++) {
                        if (q != local) {
                            kernel.bind(bytes[q], acc, bytes[local]);
                            kernel.apply(op, mine, accAt, mine, len);
                            acc = bytes[local];
                            accAt = mine;
                        }
                    }
                    if (mode == Mode.ALL_REDUCE) {
                        out.put(out.position() + chunkStart(count, n, local) + from, floats[local], mine, len);
                    } else {
                        chunk.put(chunk.position() + from, floats[local], mine, len);
                    }
                }
            } else {
                int len = pieceLength(count, local, from, piece);
                if (len > 0) {
                    floats[local].put(base + local * piece, chunk, chunk.position() + from, len);
                    out.put(out.position() + chunkStart(count, n, local) + from, chunk, chunk.position() + from, len);
                }
                writeCall(slot, call);
                segments[local].setRelease(WRITTEN, t + 1);
            }
            segments[local].setRelease(REDUCED, t + 1);
            if (mode != Mode.REDUCE_SCATTER) {
                awaitPeers(REDUCED, t + 1, call, "to reduce step " + (t + 1));
                if (mode == Mode.ALL_GATHER) {
                    checkCalls(slot, call);
                }
                for (int q = 0; q < n; q++) {
                    int len = pieceLength(count, q, from, piece);
                    if (q != local && len > 0) {
                        out.put(out.position() + chunkStart(count, n, q) + from, floats[q], base + q * piece, len);
                    }
                }
            }
            segments[local].setRelease(GATHERED, t + 1);
        }
    }

    /** Elements of chunk {@code a}'s piece that starts {@code from} elements into the chunk. */
    private int pieceLength(int count, int a, int from, int piece) {
        int chunk = chunkStart(count, n, a + 1) - chunkStart(count, n, a);
        return Math.max(0, Math.min(piece, chunk - from));
    }

    private void writeCall(int slot, CollectiveCall call) {
        ByteBuffer b = bytes[local];
        int at = CALLS + slot * CALL_BYTES;
        b.putLong(at, call.seq());
        b.putInt(at + 8, call.kind().ordinal() << 8 | call.op().ordinal());
        b.putInt(at + 12, call.count());
        b.putInt(at + 16, call.root());
    }

    /** Every peer's call for this slot is this rank's, or a {@link CallMismatchException} naming both. */
    private void checkCalls(int slot, CollectiveCall call) {
        int at = CALLS + slot * CALL_BYTES;
        int kindOp = call.kind().ordinal() << 8 | call.op().ordinal();
        for (int q = 0; q < n; q++) {
            ByteBuffer b = bytes[q];
            if (q == local) {
                continue;
            }
            long seq = b.getLong(at);
            int ko = b.getInt(at + 8);
            int count = b.getInt(at + 12);
            int root = b.getInt(at + 16);
            if (seq != call.seq() || ko != kindOp || count != call.count() || root != call.root()) {
                StringBuilder peer = new StringBuilder();
                Collective[] kinds = Collective.values();
                ReduceOp[] ops = ReduceOp.values();
                int kind = ko >>> 8;
                int o = ko & 0xFF;
                if (kind < kinds.length && o < ops.length) {
                    CollectiveCall.describe(peer.append('#').append(seq).append(' '), kinds[kind], ops[o], count, root);
                } else {
                    peer.append("an unreadable call");
                }
                throw new CallMismatchException("rank " + rank + ": rank " + layout.rankAt(host, q) + " (on the same "
                        + "host) runs collective " + peer + " where this rank runs collective " + call);
            }
        }
    }

    /** Waits until every peer's counter at {@code offset} reaches {@code target}. */
    private void awaitPeers(int offset, long target, CollectiveCall call, String what) {
        if (target <= 0) {
            return;
        }
        for (int q = 0; q < n; q++) {
            if (q != local && segments[q].getAcquire(offset) < target) {
                await(q, offset, target, call, what);
            }
        }
    }

    private void await(int q, int offset, long target, CollectiveCall call, String what) {
        SharedSegment peer = segments[q];
        long start = System.nanoTime();
        long lastCheck = start;
        long spinUntil = start + spin.budgetNanos();
        while (true) {
            for (int i = 0; i < 32; i++) {
                if (peer.getAcquire(offset) >= target) {
                    spin.adapt(System.nanoTime() - start);
                    return;
                }
                spin.pause();
            }
            long now = System.nanoTime();
            if (now - spinUntil > 0) {
                LockSupport.parkNanos(NAP_NANOS);
                now = System.nanoTime();
            }
            if (now - lastCheck > CHECK_NANOS) {
                lastCheck = now;
                call.guard().check(now - start);
                if (now - start > timeoutNanos) {
                    throw new HostTimeoutException("rank " + rank + ": rank " + layout.rankAt(host, q)
                            + " (on the same host) made no progress within " + Duration.ofNanos(timeoutNanos).toMillis()
                            + " ms in collective " + call + ": waited for it " + what);
                }
            }
        }
    }

    @Override
    public void close() {
        closeAll(segments);
    }

    private static void closeAll(SharedSegment[] segments) {
        for (SharedSegment s : segments) {
            if (s != null) {
                s.close();
            }
        }
    }
}
