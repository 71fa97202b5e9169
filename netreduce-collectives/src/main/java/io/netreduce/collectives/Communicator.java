package io.netreduce.collectives;

import java.nio.FloatBuffer;
import java.util.concurrent.CompletableFuture;

/**
 * A group of {@link #size()} ranks that run collectives together. Every rank must issue
 * the same collectives, with tensors of the same length, in the same order; operations run
 * one at a time in the order they were called (asynchronous ones included).
 *
 * <p>Tensors are the {@code remaining()} elements of a {@link FloatBuffer} (from its
 * position to its limit); position and limit are left unchanged. A direct buffer in
 * {@link Collectives#TENSOR_ORDER} (little-endian) is registered once and
 * used in place, without copies; any other buffer (heap, or the other byte order) is staged
 * through registered memory. A buffer must not be touched while an operation on it runs.
 *
 * <p>Results are bitwise identical on every rank. Blocking calls throw
 * {@link CollectiveException} on failure, never wait longer than the configured timeout
 * without progress, and throw {@link IllegalArgumentException} or
 * {@link IllegalStateException} at once for bad arguments or a closed communicator.
 */
public interface Communicator extends AutoCloseable {

    int rank();

    int size();

    /**
     * The algorithm that runs: its name ("netreduce", "ring"), followed, if it is a fallback
     * the configuration allowed, by why the requested one could not run, e.g.
     * {@code ring (fallback from netreduce: no switch is configured ...)}.
     */
    String algorithm();

    /** The verbs provider (transport) in use, e.g. "soft" or "tcp". */
    String transport();

    /** In-place all-reduce, SUM. */
    default void allReduce(FloatBuffer tensor) {
        allReduce(tensor, ReduceOp.SUM);
    }

    /** In-place all-reduce. */
    void allReduce(FloatBuffer tensor, ReduceOp op);

    default CompletableFuture<Void> allReduceAsync(FloatBuffer tensor) {
        return allReduceAsync(tensor, ReduceOp.SUM);
    }

    /**
     * Queues an in-place all-reduce and returns at once. Argument errors are thrown here;
     * failures of the operation complete the future exceptionally with a
     * {@link CollectiveException}.
     */
    CompletableFuture<Void> allReduceAsync(FloatBuffer tensor, ReduceOp op);

    /** Out-of-place all-reduce, SUM: see {@link #allReduce(FloatBuffer, FloatBuffer, ReduceOp)}. */
    default void allReduce(FloatBuffer input, FloatBuffer output) {
        allReduce(input, output, ReduceOp.SUM);
    }

    /**
     * Out-of-place all-reduce: the element-wise reduction of every rank's {@code input} is
     * written to {@code output}; {@code input} is only read (it may be read-only). Both must
     * have the same {@code remaining()}. Passing the same buffer (or two views of the same
     * elements) is the in-place all-reduce; views that partly overlap are refused. Costs no
     * more than in place: the algorithms read the input where they would have read the
     * tensor, so no copy of the input is made.
     */
    void allReduce(FloatBuffer input, FloatBuffer output, ReduceOp op);

    /** Queues an out-of-place all-reduce and returns at once (as {@link #allReduceAsync(FloatBuffer, ReduceOp)}). */
    CompletableFuture<Void> allReduceAsync(FloatBuffer input, FloatBuffer output, ReduceOp op);

    /** Copies {@code root}'s tensor into every rank's tensor, bit for bit. */
    void broadcast(FloatBuffer tensor, int root);

    /**
     * Gathers every rank's {@code input} into {@code output}, rank 0's first:
     * {@code output.remaining()} must be {@code size() * input.remaining()}.
     */
    void allGather(FloatBuffer input, FloatBuffer output);

    /** Reduce-scatter, SUM: see {@link #reduceScatter(FloatBuffer, FloatBuffer, ReduceOp)}. */
    default void reduceScatter(FloatBuffer input, FloatBuffer output) {
        reduceScatter(input, output, ReduceOp.SUM);
    }

    /**
     * Reduces every rank's {@code input} element-wise and leaves chunk {@code rank()} of the
     * result in {@code output}: {@code input.remaining()} must be {@code size() *
     * output.remaining()}, and rank r receives elements {@code [r·m, (r+1)·m)} of the
     * reduction (m = {@code output.remaining()}). {@code input} is only read. On the ring
     * this is the reduce-scatter half alone, half the traffic of an all-reduce.
     */
    void reduceScatter(FloatBuffer input, FloatBuffer output, ReduceOp op);

    /** Returns when every rank has called it. */
    void barrier();

    /**
     * A snapshot of this rank's counters (collectives run by kind, wire bytes and packets,
     * retransmissions, time waiting, errors), to log or export
     * ({@link CommunicatorCounters#toPrometheus()}). Cheap; safe from any thread.
     */
    CommunicatorCounters counters();

    /** Leaves the group: releases registered memory, queue pairs and the rendezvous connection. */
    @Override
    void close();
}
