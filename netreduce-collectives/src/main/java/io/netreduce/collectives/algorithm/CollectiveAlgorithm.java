package io.netreduce.collectives.algorithm;

import io.netreduce.collectives.ReduceOp;
import io.netreduce.verbs.TransportCapabilities;
import java.nio.FloatBuffer;

/**
 * One way of carrying out a group's collectives, over one transport: NetReduce's in-network
 * aggregation, the ring, and whatever joins them. The engine
 * ({@link io.netreduce.collectives.engine.GroupCommunicator}) keeps everything else: call
 * order, threads, argument checks, the agreement between ranks, AVG's division, errors and
 * the lifecycle.
 *
 * <p>Lifecycle: constructed cheaply (nothing opened), asked {@link #unsupported} for the
 * transport, {@link #join joined} by every rank of the group at once, then used for one
 * collective at a time, then {@link #close closed}.
 *
 * <p>Tensors are the {@code remaining()} elements of their buffers; position and limit are
 * left alone. For an in-place call {@code input == output}. The engine has checked lengths,
 * writability and overlap, and never passes {@link ReduceOp#AVG} (it asks for SUM and
 * divides). Every rank must get the same bits.
 */
public interface CollectiveAlgorithm extends AutoCloseable {

    /** The name users ask for it by ("netreduce", "ring"). */
    String name();

    /**
     * Null if this algorithm computes {@code op} over {@code type} on a transport with these
     * capabilities; otherwise one line saying why not and what to use instead.
     */
    String unsupported(ReduceOp op, ElementType type, TransportCapabilities transport);

    default boolean supports(ReduceOp op, ElementType type, TransportCapabilities transport) {
        return unsupported(op, type, transport) == null;
    }

    /**
     * Joins the group: every rank calls it at the same time, and the ranks set up what the
     * algorithm needs (connections, a ring on the switch) through {@code group}. Throws
     * {@link AlgorithmUnavailableException} on every rank alike when the group learns that it
     * cannot run; anything else that goes wrong is a {@link RuntimeException}.
     */
    void join(GroupContext group) throws AlgorithmUnavailableException;

    /**
     * True if every rank must have started a collective before any may send (through a
     * switch, a sender's packets are acknowledged only once every rank's have arrived): the
     * engine then holds each call until all ranks have announced it.
     */
    default boolean startsTogether() {
        return false;
    }

    /** Reduces every rank's {@code input} into {@code output} ({@code op} is SUM, MAX or MIN). */
    void allReduce(FloatBuffer input, FloatBuffer output, ReduceOp op, ProgressGuard guard);

    /**
     * Reduces every rank's {@code input} (P chunks of {@code output.remaining()} elements)
     * and leaves chunk {@code rank} of the result in {@code output}.
     */
    void reduceScatter(FloatBuffer input, FloatBuffer output, ReduceOp op, ProgressGuard guard);

    /** Every rank's {@code input} into {@code output}, rank 0's first. */
    void allGather(FloatBuffer input, FloatBuffer output, ProgressGuard guard);

    /** {@code root}'s tensor into every rank's, bit for bit. */
    void broadcast(FloatBuffer tensor, int root, ProgressGuard guard);

    /** What the transport moved so far (cumulative; zeros before {@link #join}). */
    Traffic traffic();

    /** Releases what {@link #join} set up; called once, after the group's last collective. */
    @Override
    void close();
}
