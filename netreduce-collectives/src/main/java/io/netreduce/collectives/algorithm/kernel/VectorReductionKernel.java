package io.netreduce.collectives.algorithm.kernel;

import io.netreduce.wire.ina.InaHeader;

import io.netreduce.collectives.ReduceOp;
import io.netreduce.collectives.algorithm.MessagePlan;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Reduction with the Vector API (incubator in Java 17): loads and stores straight from and
 * to the direct buffers at the machine's widest vector, no copies through the heap. Loaded
 * only when {@code jdk.incubator.vector} is in the boot layer ({@link ReductionKernel#create}).
 * The three operations have a loop each: C2 intrinsifies a lane-wise operator only when it
 * is a constant.
 */
final class VectorReductionKernel extends ReductionKernel {
    private static final VectorSpecies<Float> SPECIES = FloatVector.SPECIES_PREFERRED;
    private static final ByteOrder ORDER = InaHeader.PAYLOAD_ORDER;

    private ByteBuffer received;
    private ByteBuffer local;
    private ByteBuffer out;

    static String describe() {
        return SPECIES.length() + " floats per vector";
    }

    @Override
    public void bind(ByteBuffer received, ByteBuffer local, ByteBuffer out) {
        this.received = received;
        this.local = local;
        this.out = out;
    }

    @Override
    public void apply(ReduceOp op, int r, int l, int o, int count) {
        int vectors = SPECIES.loopBound(count);
        switch (op) {
            case MAX -> max(4 * r, 4 * l, 4 * o, vectors);
            case MIN -> min(4 * r, 4 * l, 4 * o, vectors);
            default -> sum(4 * r, 4 * l, 4 * o, vectors);
        }
        for (int i = vectors; i < count; i++) {
            float x = received.getFloat(4 * (r + i));
            float y = local.getFloat(4 * (l + i));
            out.putFloat(4 * (o + i), op == ReduceOp.MAX ? Math.max(x, y) : op == ReduceOp.MIN ? Math.min(x, y) : x + y);
        }
    }

    private void sum(int r, int l, int o, int elements) {
        ByteBuffer x = received;
        ByteBuffer y = local;
        ByteBuffer z = out;
        for (int i = 0; i < 4 * elements; i += 4 * SPECIES.length()) {
            FloatVector.fromByteBuffer(SPECIES, x, r + i, ORDER)
                    .add(FloatVector.fromByteBuffer(SPECIES, y, l + i, ORDER))
                    .intoByteBuffer(z, o + i, ORDER);
        }
    }

    private void max(int r, int l, int o, int elements) {
        ByteBuffer x = received;
        ByteBuffer y = local;
        ByteBuffer z = out;
        for (int i = 0; i < 4 * elements; i += 4 * SPECIES.length()) {
            FloatVector.fromByteBuffer(SPECIES, x, r + i, ORDER)
                    .lanewise(VectorOperators.MAX, FloatVector.fromByteBuffer(SPECIES, y, l + i, ORDER))
                    .intoByteBuffer(z, o + i, ORDER);
        }
    }

    private void min(int r, int l, int o, int elements) {
        ByteBuffer x = received;
        ByteBuffer y = local;
        ByteBuffer z = out;
        for (int i = 0; i < 4 * elements; i += 4 * SPECIES.length()) {
            FloatVector.fromByteBuffer(SPECIES, x, r + i, ORDER)
                    .lanewise(VectorOperators.MIN, FloatVector.fromByteBuffer(SPECIES, y, l + i, ORDER))
                    .intoByteBuffer(z, o + i, ORDER);
        }
    }
}
