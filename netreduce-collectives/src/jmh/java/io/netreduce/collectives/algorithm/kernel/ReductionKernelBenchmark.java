package io.netreduce.collectives.algorithm.kernel;

import io.netreduce.wire.ina.InaHeader;

import io.netreduce.collectives.ReduceOp;
import io.netreduce.collectives.algorithm.MessagePlan;
import io.netreduce.collectives.algorithm.DirectBuffers;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The ring's sum as a rank at P = 2 does it per all-reduce: a chunk of received 256 KiB
 * messages, cycling through an 8-slot staging ring, added into the tensor in place, in
 * cache-line aligned buffers. One operation is that whole chunk: 1 MiB (a 2 MiB all-reduce,
 * in cache) or 32 MiB (64 MiB, from memory). The array kernel is the baseline of the same run.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "--add-modules=jdk.incubator.vector")
public class ReductionKernelBenchmark {
    private static final int MESSAGE_FLOATS = (256 << 10) / 4;
    private static final int SLOTS = 8;

    @Param({"array", "vector", "native"})
    public String kernel;

    @Param({"1048576", "33554432"})
    public int chunkBytes;

    @Param({"SUM"})
    public ReduceOp op;

    private ReductionKernel reduction;

    @Setup
    public void setUp() {
        ByteBuffer staging = DirectBuffers.allocate(4 * SLOTS * MESSAGE_FLOATS).order(InaHeader.PAYLOAD_ORDER);
        ByteBuffer tensor = DirectBuffers.allocate(chunkBytes).order(InaHeader.PAYLOAD_ORDER);
        for (int i = 0; i < SLOTS * MESSAGE_FLOATS; i++) {
            staging.putFloat(4 * i, i % 7);
        }
        reduction = switch (kernel) {
            case "vector" -> new VectorReductionKernel();
            case "native" -> new NativeReductionKernel(new VectorReductionKernel());
            default -> new ArrayReductionKernel();
        };
        reduction.bind(staging, tensor, tensor);
    }

    @Benchmark
    public void sumChunk() {
        for (int k = 0; k < chunkBytes / 4 / MESSAGE_FLOATS; k++) {
            reduction.apply(op, (k % SLOTS) * MESSAGE_FLOATS, k * MESSAGE_FLOATS, k * MESSAGE_FLOATS, MESSAGE_FLOATS);
        }
    }
}
