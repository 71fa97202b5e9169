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
 * writability and overlap; an algorithm combines with {@link CollectiveCall#combine()}, never
 * {@link ReduceOp#AVG} (the engine divides the sum). Every rank must get the same bits.
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
     * True if this algorithm's messages carry each rank's {@link CollectiveCall} and a rank
     * compares its neighbours' with its own before it uses their data, failing with a
     * {@link CallMismatchException}, and if every rank's result depends on such a check of
     * every other rank's call (so no rank can return from a call the others did not make).
     * Then the engine checks nothing through the rendezvous store in steady state;
     * otherwise it announces every call there.
     */
    default boolean comparesCallsInBand() {
        return false;
    }

    /**
     * Reduces every rank's {@code input} into {@code output} with {@code call.combine()}
     * (SUM, MAX or MIN). {@code call} also says what the caller asked for, which the
     * algorithm may be running on behalf of (a broadcast built from an all-reduce).
     */
    void allReduce(CollectiveCall call, FloatBuffer input, FloatBuffer output);

    /**
     * Reduces every rank's {@code input} (P chunks of {@code output.remaining()} elements)
     * and leaves chunk {@code rank} of the result in {@code output}.
     */
    void reduceScatter(CollectiveCall call, FloatBuffer input, FloatBuffer output);

    /** Every rank's {@code input} into {@code output}, rank 0's first. */
    void allGather(CollectiveCall call, FloatBuffer input, FloatBuffer output);

    /** {@code call.root()}'s tensor into every rank's, bit for bit. */
    void broadcast(CollectiveCall call, FloatBuffer tensor);

    /** What the transport moved so far (cumulative; zeros before {@link #join}). */
    Traffic traffic();

    /** Releases what {@link #join} set up; called once, after the group's last collective. */
    @Override
    void close();
}
