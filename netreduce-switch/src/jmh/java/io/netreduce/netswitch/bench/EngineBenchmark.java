package io.netreduce.netswitch.bench;

import io.netreduce.netswitch.RingFixture;
import io.netreduce.netswitch.engine.AggregationEngine;
import io.netreduce.netswitch.engine.OutputBatch;
import io.netreduce.netswitch.engine.RingConfig;
import io.netreduce.netswitch.engine.SwitchCounters;
import io.netreduce.wire.ina.InaHeader;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;

/**
 * The aggregation engine alone, one thread: packets per second through
 * {@link AggregationEngine#process} for P ranks at 1 KiB of payload per packet (MTU 1024;
 * {@code -Dengine.mtu=4096} for the data plane's default), ranks in lockstep so every P-th
 * packet completes an aggregation and emits P result packets (ICRC verified on input,
 * recomputed on every output). One invocation pushes a precrafted stream of
 * {@value #MESSAGES} messages laid out in one direct buffer, as a data plane's reused
 * receive buffer holds them (2 MiB at MTU 1024); each invocation starts from a fresh ring
 * because msgIds must keep increasing. On a shared machine prefer {@link EngineProfile},
 * which reports CPU time next to wall time.
 *
 * <p>Run: {@code mvn -pl netreduce-switch exec:exec -Dexec.classpathScope=test -Dexec.executable=java
 * -Dexec.args="-cp %classpath org.openjdk.jmh.Main EngineBenchmark"} (JMH's forks need a real
 * class path, which {@code exec:java} does not give them).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class EngineBenchmark {
    static final int MESSAGES = 64;
    static final int PACKETS_PER_MESSAGE = 8;
    static final int MTU = Integer.getInteger("engine.mtu", 1024);
    /** Results named in ring memory as the native data plane's batch does ({@code -Dengine.gather=true}), or copied whole. */
    static final boolean GATHER = Boolean.getBoolean("engine.gather");
    static final int RANKS = 4;
    static final int OPS = MESSAGES * PACKETS_PER_MESSAGE * RANKS;
    private final int ranks = RANKS;

    @Param({"fp32", "int32"})
    public String dtype;

    private RingFixture fixture;
    /** The whole stream in one direct buffer, as a data plane's reused receive buffer holds it. */
    private ByteBuffer stream;
    private int[] offsets;
    private int[] lengths;
    private int[] sources;
    private AggregationEngine engine;
    private final OutputBatch out = new OutputBatch(256, true, GATHER);

    {
        out.drainWith(OutputBatch::clear); // what a data plane would send, discarded
    }

    @Setup(Level.Trial)
    public void craft() {
        RingConfig c = config();
        fixture = new RingFixture(c, 10, 1);
        Random rnd = new Random(1);
        int total = MESSAGES * PACKETS_PER_MESSAGE * ranks;
        offsets = new int[total];
        lengths = new int[total];
        sources = new int[total];
        List<ByteBuffer> crafted = new ArrayList<>();
        @SuppressWarnings("unchecked")
        List<ByteBuffer>[] perRank = new List[ranks];
        int k = 0;
        for (int m = 0; m < MESSAGES; m++) {
            for (int r = 0; r < ranks; r++) {
                perRank[r] = fixture.message(r, m, fixture.randomPayload(rnd, c.messagePayloadLength()));
            }
            for (int j = 0; j < PACKETS_PER_MESSAGE; j++) {
                for (int r = 0; r < ranks; r++) {
                    crafted.add(perRank[r].get(j));
                    sources[k++] = fixture.ip[r];
                }
            }
        }
        int bytes = 0;
        for (ByteBuffer p : crafted) {
            bytes += p.capacity();
        }
        stream = ByteBuffer.allocateDirect(bytes);
        int at = 0;
        for (int i = 0; i < total; i++) {
            ByteBuffer p = crafted.get(i);
            stream.put(at, p, 0, p.capacity());
            offsets[i] = at;
            lengths[i] = p.capacity();
            at += p.capacity();
        }
    }

    private RingConfig config() {
        int payload = PACKETS_PER_MESSAGE * MTU - InaHeader.LENGTH;
        return new RingConfig(1, ranks, 4, payload, MTU,
                dtype.equals("fp32") ? InaHeader.DTYPE_FP32 : InaHeader.DTYPE_INT32, ByteOrder.LITTLE_ENDIAN);
    }

    @Setup(Level.Invocation)
    public void freshRing() {
        engine = new AggregationEngine(1L << 30);
        engine.createRing(fixture.config);
        for (int r = 0; r < ranks; r++) {
            engine.addConnection(1, fixture.connection(r));
        }
    }

    @TearDown(Level.Invocation)
    public void check() {
        long done = engine.counters().get(SwitchCounters.Counter.MESSAGES_COMPLETED);
        if (done != MESSAGES || engine.counters().totalDrops() != 0) {
            throw new IllegalStateException("benchmark stream did not aggregate cleanly: " + done + " messages, "
                    + engine.counters().totalDrops() + " drops");
        }
    }

    @Benchmark
    @OperationsPerInvocation(OPS)
    public int packets() {
        OutputBatch o = out;
        AggregationEngine e = engine;
        int emitted = 0;
        ByteBuffer in = stream;
        for (int i = 0; i < offsets.length; i++) {
            e.process(sources[i], in, offsets[i], lengths[i], o);
            if (o.remaining() < RingConfig.MAX_RANKS + 1) {
                emitted += o.size();
                o.clear();
            }
        }
        emitted += o.size();
        o.clear();
        return emitted;
    }
}
