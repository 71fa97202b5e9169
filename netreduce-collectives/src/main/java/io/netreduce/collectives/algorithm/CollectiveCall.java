package io.netreduce.collectives.algorithm;

import io.netreduce.collectives.Collective;
import io.netreduce.collectives.ReduceOp;

/**
 * One collective as this rank called it: what every rank of the group must agree on (its
 * sequence number, kind, element count, reduction and root) and how the algorithm waits
 * (the {@link ProgressGuard}). The engine fills one instance per communicator and reuses
 * it for every call, so that nothing is allocated per call; algorithms read it and, where
 * their messages can carry it, put it on the wire ({@link CallHeader}) so that the
 * receiving rank compares it with its own.
 *
 * <p>The count is what {@link #describe} prints: the input's element count (for
 * all-gather the per-rank input, for reduce-scatter the whole input), and 1 for a barrier.
 */
public final class CollectiveCall {
    private long seq;
    private Collective kind = Collective.BARRIER;
    private ReduceOp op = ReduceOp.SUM;
    private int count;
    private int root = -1;
    private ProgressGuard guard = ProgressGuard.NONE;

    /** Describes the next call; {@code root} is -1 except for a broadcast. */
    public CollectiveCall set(long seq, Collective kind, ReduceOp op, int count, int root, ProgressGuard guard) {
        this.seq = seq;
        this.kind = kind;
        this.op = op;
        this.count = count;
        this.root = root;
        this.guard = guard;
        return this;
    }

    /** A call outside any communicator (benchmarks of one algorithm): sequence number 1, SUM. */
    public static CollectiveCall allReduce(int count, ReduceOp op, ProgressGuard guard) {
        return new CollectiveCall().set(1, Collective.ALL_REDUCE, op, count, -1, guard);
    }

    /** 1, 2, ... in call order on every rank. */
    public long seq() {
        return seq;
    }

    public Collective kind() {
        return kind;
    }

    /** The reduction as the caller asked for it (AVG included). */
    public ReduceOp op() {
        return op;
    }

    /** The reduction the algorithm computes: AVG is a SUM that the engine divides afterwards. */
    public ReduceOp combine() {
        return op == ReduceOp.AVG ? ReduceOp.SUM : op;
    }

    public int count() {
        return count;
    }

    /** The broadcast's root, else -1. */
    public int root() {
        return root;
    }

    public ProgressGuard guard() {
        return guard;
    }

    /**
     * True if a peer's call, as its {@link CallHeader} carries it, is this one: sequence
     * number (its low 32 bits), kind, reduction, count and root.
     */
    public boolean matches(CallHeader peer) {
        return peer.seq() == (int) seq && peer.kind() == kind && peer.op() == op && peer.count() == count
                && peer.root() == root;
    }

    /**
     * A 32-bit digest of everything the ranks must agree on (sequence number, kind,
     * reduction, count, root), for messages with no room for the call itself (the INA
     * header: a switch compares the ranks' digests). Equal calls give equal digests on every
     * rank; different ones collide with probability about 2^-32.
     */
    public int digest() {
        long h = 0x9E3779B97F4A7C15L;
        h = mix(h ^ seq);
        h = mix(h ^ ((long) kind.ordinal() << 8 | op.ordinal()));
        h = mix(h ^ ((long) count << 20 ^ (root & 0xFFFFFL)));
        return (int) (h ^ (h >>> 32));
    }

    /** A 64-bit finalizer (SplitMix64's): every input bit affects every output bit. */
    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /** "allReduce(5000)", "allReduce(5000, MAX)", "broadcast(100, root 0)", "barrier": the user's call. */
    public StringBuilder describe(StringBuilder out) {
        return describe(out, kind, op, count, root);
    }

    /** The same description for any call, e.g. one a peer's header carries. */
    public static StringBuilder describe(StringBuilder out, Collective kind, ReduceOp op, int count, int root) {
        if (kind == Collective.BARRIER) {
            return out.append(kind.method());
        }
        out.append(kind.method()).append('(').append(count);
        if (kind == Collective.BROADCAST) {
            out.append(", root ").append(root);
        } else if (op != ReduceOp.SUM) {
            out.append(", ").append(op.name());
        }
        return out.append(')');
    }

    @Override
    public String toString() {
        return describe(new StringBuilder("#").append(seq).append(' ')).toString();
    }
}
