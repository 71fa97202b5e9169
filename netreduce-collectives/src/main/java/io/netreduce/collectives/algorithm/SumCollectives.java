package io.netreduce.collectives.algorithm;

import java.nio.FloatBuffer;

/**
 * Collectives built from an all-reduce, for an algorithm that can only add (a NetReduce
 * switch) or has no better way for one of them. Each costs a full all-reduce of its
 * largest tensor.
 *
 * <p>Each is passed the caller's {@link CollectiveCall} unchanged: the all-reduce runs on
 * its behalf (with its reduction; SUM for broadcast and all-gather).
 *
 * <p>Broadcast and all-gather rest on -0.0 being the identity of IEEE-754 addition: a sum
 * in which every rank but one adds -0.0 reproduces that rank's bits (NaN payloads aside),
 * through any summation order.
 */
public final class SumCollectives {
    private SumCollectives() {
    }

    /** Every rank but {@code root} contributes -0.0, so the sum is the root's tensor. */
    public static void broadcast(CollectiveAlgorithm a, int rank, CollectiveCall call, FloatBuffer tensor) {
        if (rank != call.root()) {
            fillNegativeZero(tensor, tensor.position(), tensor.remaining());
        }
        a.allReduce(call, tensor, tensor);
    }

    /** Each rank contributes its input in its own chunk of the output and -0.0 elsewhere. */
    public static void allGather(CollectiveAlgorithm a, int rank, CollectiveCall call, FloatBuffer input,
                                 FloatBuffer output) {
        int m = input.remaining();
        fillNegativeZero(output, output.position(), output.remaining());
        output.put(output.position() + rank * m, input, input.position(), m);
        a.allReduce(call, output, output);
    }

    /** The whole reduction into {@code scratch}, of which this rank keeps its chunk. */
    public static void reduceScatter(CollectiveAlgorithm a, int rank, CollectiveCall call, FloatBuffer input,
                                     FloatBuffer output, ScratchTensor scratch) {
        int m = output.remaining();
        FloatBuffer all = scratch.take(input.remaining());
        a.allReduce(call, input, all);
        output.put(output.position(), all, rank * m, m);
    }

    private static void fillNegativeZero(FloatBuffer b, int from, int count) {
        for (int i = from; i < from + count; i++) {
            b.put(i, -0.0f);
        }
    }
}
