package io.netreduce.examples.dl4j;

import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;

/**
 * Zero-copy bridge from ND4J to NIO: a {@link FloatBuffer} over the off-heap memory of
 * a contiguous float {@link INDArray}. Writing to the buffer writes to the array, so the
 * all-reduce sums straight into DL4J's flattened gradient (or parameter) view.
 * ND4J keeps its data in the CPU's native order (little-endian on x86), not the
 * big-endian payload order, so the communicator stages such a buffer through its own
 * registered memory; the examples themselves make no copy.
 */
public final class NdArrays {

    private NdArrays() {
    }

    public static FloatBuffer floatView(INDArray array) {
        if (array.dataType() != DataType.FLOAT) {
            throw new IllegalArgumentException("need a FLOAT array, got " + array.dataType()
                    + " (configure the network with dataType(DataType.FLOAT))");
        }
        if (!array.isVector() && !array.isScalar() || array.elementWiseStride() != 1) {
            throw new IllegalArgumentException("need a contiguous vector, got shape "
                    + java.util.Arrays.toString(array.shape()) + " with element-wise stride "
                    + array.elementWiseStride());
        }
        long offset = array.offset();
        long length = array.length();
        ByteBuffer whole = array.data().asNio().order(ByteOrder.nativeOrder());
        long end = (offset + length) * Float.BYTES;
        if (end > whole.capacity()) {
            throw new IllegalStateException("array view [" + offset + ", " + (offset + length)
                    + ") exceeds its buffer of " + whole.capacity() / Float.BYTES + " floats");
        }
        whole.position((int) (offset * Float.BYTES)).limit((int) end);
        return whole.slice().order(ByteOrder.nativeOrder()).asFloatBuffer();
    }
}
