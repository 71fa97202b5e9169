package io.netreduce.collectives.algorithm.kernel;

import io.netreduce.wire.ina.InaHeader;

import io.netreduce.collectives.ReduceOp;
import io.netreduce.collectives.algorithm.MessagePlan;
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
 * The ring's sum as a rank at P = 2 does it per all-reduce of 64 MiB: 32 MiB of received
 * 1 MiB messages, cycling through a 16-slot staging ring, added into a 32 MiB tensor in
 * place. One operation is that whole chunk; the array kernel is the baseline of the same
 * run.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "--add-modules=jdk.incubator.vector")
public class ReductionKernelBenchmark {
    private static final int MESSAGE_FLOATS = (1 << 20) / 4;
    private static final int SLOTS = 16;
    private static final int CHUNK_FLOATS = 8 << 20;

    @Param({"array", "vector"})
    public String kernel;

    @Param({"SUM"})
    public ReduceOp op;

    private ReductionKernel reduction;

    @Setup
    public void setUp() {
        ByteBuffer staging = ByteBuffer.allocateDirect(4 * SLOTS * MESSAGE_FLOATS).order(InaHeader.PAYLOAD_ORDER);
        ByteBuffer tensor = ByteBuffer.allocateDirect(4 * CHUNK_FLOATS).order(InaHeader.PAYLOAD_ORDER);
        for (int i = 0; i < SLOTS * MESSAGE_FLOATS; i++) {
            staging.putFloat(4 * i, i % 7);
        }
        reduction = "vector".equals(kernel) ? new VectorReductionKernel() : new ArrayReductionKernel();
        reduction.bind(staging, tensor, tensor);
    }

    @Benchmark
    public void sumChunk() {
        for (int k = 0; k < CHUNK_FLOATS / MESSAGE_FLOATS; k++) {
            reduction.apply(op, (k % SLOTS) * MESSAGE_FLOATS, k * MESSAGE_FLOATS, k * MESSAGE_FLOATS, MESSAGE_FLOATS);
        }
    }
}
