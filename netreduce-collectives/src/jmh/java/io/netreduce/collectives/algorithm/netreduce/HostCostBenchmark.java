package io.netreduce.collectives.algorithm.netreduce;

import io.netreduce.collectives.algorithm.netreduce.MessageHooks;
import io.netreduce.collectives.algorithm.ProgressGuard;
import io.netreduce.collectives.algorithm.netreduce.RingSettings;
import io.netreduce.collectives.algorithm.netreduce.WindowedAllReduce;
import io.netreduce.testkit.inproc.InprocProvider;
import io.netreduce.testkit.inproc.InprocRing;
import io.netreduce.verbs.Access;
import io.netreduce.verbs.MemoryRegion;
import io.netreduce.wire.ina.InaHeader;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.EnumSet;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The host layer's own cost: one in-place all-reduce of a 64 MiB tensor by a single rank
 * whose queue pair is connected to itself on the in-process provider. The provider
 * delivers each SEND into the posted RECV at post time and skips the payload copy (source
 * and destination are the same bytes), so the time measured is the host layer's message
 * plan, header writes, posting, completion handling and header verification, plus the
 * provider's own bookkeeping. Reported as operations per second; GB/s of tensor per core =
 * ops/s × tensorBytes / 1e9.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class HostCostBenchmark {
    @Param({"67108864"})
    public int tensorBytes;

    @Param({"4096", "65536", "262144", "1048576"})
    public int payloadBytes;

    @Param({"8"})
    public int window;

    private InprocRing ring;
    private ByteBuffer copyTarget;
    private WindowedAllReduce engine;
    private MemoryRegion tensor;

    @Setup(Level.Trial)
    public void setUp() {
        ring = new InprocRing(InprocProvider.NAME, 1, null, 0);
        InprocRing.Rank rank = ring.ranks.get(0);
        ByteBuffer b = ByteBuffer.allocateDirect(tensorBytes);
        for (int i = 0; i < tensorBytes; i += 4) {
            b.putFloat(i, i * 0.5f);
        }
        tensor = rank.pd.register(b, EnumSet.of(Access.LOCAL_WRITE));
        copyTarget = ByteBuffer.allocateDirect(tensorBytes);
        engine = new WindowedAllReduce(rank.pd, rank.toNext, rank.fromPrev, rank.cq,
                new RingSettings(1, 0, 1, InaHeader.DTYPE_FP32, window, payloadBytes, Duration.ofSeconds(30)));
    }

    @Benchmark
    public void allReduce() {
        engine.run(tensor, 0, tensor, 0, tensorBytes / 4, 1, MessageHooks.NONE, ProgressGuard.NONE);
    }

    /** Same-run baseline: one copy of the tensor (what a host layer that copied payloads would add). */
    @Benchmark
    public void copyBaseline() {
        copyTarget.put(0, tensor.buffer(), 0, tensorBytes);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        engine.close();
        ring.close();
    }
}
