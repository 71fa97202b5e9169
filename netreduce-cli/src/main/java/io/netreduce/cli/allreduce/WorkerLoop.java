package io.netreduce.cli.allreduce;

import io.netreduce.wire.ina.InaHeader;

import io.netreduce.collectives.Communicator;
import io.netreduce.collectives.algorithm.MessagePlan;
import io.netreduce.verbs.Counter;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.nio.FloatBuffer;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * One rank's measurement loop, run identically on every rank of a communicator: for each
 * size, a checked all-reduce against {@link Reference}, warm-up runs, a barrier, then the
 * timed runs (mean time and process CPU per all-reduce), for out-of-place ({@code allReduce(input, output)}, as
 * nccl-tests times {@code ncclAllReduce(sendbuff, recvbuff)}) and in-place placement.
 *
 * <p>Tensors are slices of two direct buffers in the payload byte order, allocated once
 * for the largest size, so the communicator registers them once and never stages.
 */
public final class WorkerLoop {
    /** In-place runs multiply the values by P; refill (untimed) this often to keep them finite. */
    private static final int REFILL_EVERY = 8;
    private static final ThreadMXBean THREAD_CPU = ManagementFactory.getThreadMXBean();
    /** Bytes all-reduced per size in each round of the compiler warm-up (at least one call). */
    private static final long WARMUP_ROUND_BYTES = 1 << 20;
    /** The most calls timed (or warmed up) per size: exact as a float, which the counts travel as. */
    private static final long MAX_ITERATIONS = 1 << 20;
    /** A rank whose compilers took more than this share of a warm-up round's wall time is still warming up. */
    private static final double COMPILING_SHARE = 0.05;
    /** The compiler warm-up ends at this many times the asked time, compiled or not. */
    private static final double WARMUP_CAP = 5;

    private final Communicator comm;
    private final Workload workload;
    private final Consumer<RankResult> results;
    private final SwitchCpu switchCpu;
    private final FloatBuffer input;
    private final FloatBuffer output;
    /** Rank 0's decision on a size's timed and extra warm-up calls, broadcast to the others. */
    private final FloatBuffer counts = ByteBuffer.allocateDirect(8).order(InaHeader.PAYLOAD_ORDER).asFloatBuffer();

    public WorkerLoop(Communicator comm, Workload workload, Consumer<RankResult> results) {
        this(comm, workload, SwitchCpu.NONE, results);
    }

    /** @param switchCpu the switch whose data-plane CPU rank 0 reports beside its own ({@link SwitchCpu#of}) */
    public WorkerLoop(Communicator comm, Workload workload, SwitchCpu switchCpu, Consumer<RankResult> results) {
        this.comm = comm;
        this.workload = workload;
        this.switchCpu = comm.rank() == 0 ? switchCpu : SwitchCpu.NONE;
        this.results = results;
        int maxBytes = (int) workload.maxSize();
        this.input = ByteBuffer.allocateDirect(maxBytes).order(InaHeader.PAYLOAD_ORDER).asFloatBuffer();
        this.output = ByteBuffer.allocateDirect(maxBytes).order(InaHeader.PAYLOAD_ORDER).asFloatBuffer();
    }

    /** Runs every size with the communicator's algorithm, reporting under {@code algorithm}. */
    public void run(String algorithm) {
        warmUpCompiler();
        for (long size : workload.sizes()) {
            int count = (int) (size / 4);
            if (workload.outOfPlace()) {
                results.accept(measure(algorithm, size, count, false));
            }
            if (workload.inPlace()) {
                results.accept(measure(algorithm, size, count, true));
            }
        }
    }

    /**
     * Untimed calls over every size and placement for at least
     * {@link Workload#warmupSeconds()} and until no rank's JIT is still busy: a fresh JVM
     * interprets, then compiles, the hot paths over its first seconds, and where P ranks
     * share two cores their compilers share them too (measured: 4 ranks, 3 s, the first
     * sizes still 5-40× their steady time). A rank is still busy while its compilers took
     * more than {@link #COMPILING_SHARE} of the last round's wall time; the warm-up stops at
     * {@link #WARMUP_CAP} times the asked time whatever the compilers do. Every rank's wish
     * is summed by an all-reduce after each round, so every rank makes the same calls.
     */
    private void warmUpCompiler() {
        if (workload.warmupSeconds() <= 0) {
            return;
        }
        long start = System.nanoTime();
        long least = start + (long) (workload.warmupSeconds() * 1e9);
        long most = start + (long) (WARMUP_CAP * workload.warmupSeconds() * 1e9);
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        boolean jitTimed = jit != null && jit.isCompilationTimeMonitoringSupported();
        FloatBuffer more = ByteBuffer.allocateDirect(4).order(InaHeader.PAYLOAD_ORDER).asFloatBuffer();
        do {
            long roundStart = System.nanoTime();
            long compiledBefore = jitTimed ? jit.getTotalCompilationTime() : 0;
            // The same calls as the measurement (barriers, checked runs, both placements), so
            // that the code compiled for the warm-up is the code the timed runs take.
            for (long size : workload.sizes()) {
                int count = (int) (size / 4);
                for (boolean inPlace : new boolean[] {false, true}) {
                    Reference.fill(input, comm.rank(), count);
                    comm.barrier();
                    for (int i = 0; i < Math.max(1, WARMUP_ROUND_BYTES / size); i++) {
                        runOnce(count, inPlace);
                        if (i == 0) {
                            Reference.countWrong(inPlace ? input : output, comm.size(), count);
                        }
                        if (inPlace && i % REFILL_EVERY == REFILL_EVERY - 1) {
                            Reference.fill(input, comm.rank(), count);
                        }
                    }
                }
            }
            long now = System.nanoTime();
            double compilingMillis = jitTimed ? jit.getTotalCompilationTime() - compiledBefore : 0;
            boolean compiling = compilingMillis > COMPILING_SHARE * (now - roundStart) / 1e6;
            boolean wanted = now < most && (now < least || compiling);
            more.put(0, wanted ? 1 : 0);
            comm.allReduce(more); // a sum of 0s and 1s: exact, and every algorithm sums
        } while (more.get(0) != 0);
    }

    private RankResult measure(String algorithm, long size, int count, boolean inPlace) {
        int rank = comm.rank();
        int p = comm.size();
        Reference.fill(input, rank, count);
        // Start every size together: filling and checking take rank-dependent time.
        comm.barrier();
        long wrong = 0;
        if (workload.check()) {
            runOnce(count, inPlace);
            wrong = Reference.countWrong(inPlace ? input : output, p, count);
        }
        // With time-based counts at least one warm-up call, to learn the pace from.
        int warmups = workload.secondsPerSize() > 0 ? Math.max(1, workload.warmup()) : workload.warmup();
        long warmupStart = System.nanoTime();
        warmUp(count, inPlace, warmups);
        int iterations = agreeOnCounts(count, inPlace, warmups, System.nanoTime() - warmupStart);
        if (inPlace) {
            Reference.fill(input, rank, count);
        }
        // Read before the barrier (the others' first packets must not reach the switch before
        // it) and after this rank's clocks stop: the HTTP round trip is not the collective's.
        long switchBefore = switchCpu.nanos();
        comm.barrier();
        long[] before = MeteredVerbsProvider.totals();
        long elapsed = 0;
        // Refilling an in-place input is the benchmark's work, not the collective's: its CPU
        // (this thread's alone) comes off the CPU column as its time stays out of the clock.
        long refillCpu = 0;
        ProcessCpu cpuClock = ProcessCpu.start();
        for (int i = 0; i < iterations; i++) {
            if (inPlace && i > 0 && i % REFILL_EVERY == 0) {
                long f0 = THREAD_CPU.getCurrentThreadCpuTime();
                Reference.fill(input, rank, count);
                refillCpu += THREAD_CPU.getCurrentThreadCpuTime() - f0;
            }
            long t0 = System.nanoTime();
            runOnce(count, inPlace);
            elapsed += System.nanoTime() - t0;
        }
        long cpu = cpuClock.elapsedNanos();
        if (cpu >= 0 && refillCpu > 0) {
            cpu = Math.max(0, cpu - refillCpu);
        }
        long[] moved = MeteredVerbsProvider.totals();
        long switchAfter = switchCpu.nanos();
        Map<String, Long> counters = new LinkedHashMap<>();
        for (Counter c : Counter.values()) {
            moved[c.ordinal()] -= before[c.ordinal()];
            if (moved[c.ordinal()] != 0) {
                counters.put(RankResult.counterName(c), moved[c.ordinal()]);
            }
        }
        long wire = moved[Counter.BYTES_SENT.ordinal()] / iterations;
        long retrans = moved[Counter.RETRANSMITTED_PACKETS.ordinal()];
        long timeouts = moved[Counter.ACK_TIMEOUTS.ordinal()];
        double timeUs = elapsed / 1e3 / iterations;
        double cpuSeconds = cpu < 0 ? Double.NaN : cpu / 1e9 / iterations;
        return new RankResult(rank, algorithm, size, count, inPlace, iterations, timeUs, wrong, wire,
                retrans, timeouts, cpuSeconds, counters, SwitchCpu.perCall(switchBefore, switchAfter, iterations));
    }

    private void warmUp(int count, boolean inPlace, int calls) {
        for (int i = 0; i < calls; i++) {
            if (inPlace && i % REFILL_EVERY == 0) {
                Reference.fill(input, comm.rank(), count);
            }
            runOnce(count, inPlace);
        }
    }

    /**
     * How many calls to time: at least {@link Workload#iterations()}, and enough to fill
     * {@link Workload#secondsPerSize()} at the pace of the {@code warmups} calls that took
     * {@code warmupNanos} (a fast call is timed thousands of times: twenty calls of 15 µs measure the
     * scheduler, not the collective). Where that many calls need a longer warm-up too (a
     * quarter of the timed span), it runs here first. Rank 0 decides and broadcasts, so
     * every rank makes the same calls.
     */
    private int agreeOnCounts(int count, boolean inPlace, int warmups, long warmupNanos) {
        if (workload.secondsPerSize() <= 0) {
            return workload.iterations();
        }
        if (comm.rank() == 0) {
            double perCall = Math.max(1, warmupNanos) / (double) warmups;
            double want = workload.secondsPerSize() * 1e9 / perCall;
            long timed = Math.max(workload.iterations(), Math.min(MAX_ITERATIONS, (long) want));
            long extraWarmup = Math.max(0, Math.min(MAX_ITERATIONS, timed / 4) - warmups);
            counts.put(0, timed).put(1, extraWarmup);
        }
        comm.broadcast(counts, 0);
        warmUp(count, inPlace, (int) counts.get(1));
        return (int) counts.get(0);
    }

    private void runOnce(int count, boolean inPlace) {
        if (inPlace) {
            input.limit(count).position(0);
            comm.allReduce(input);
        } else {
            input.limit(count).position(0);
            output.limit(count).position(0);
            comm.allReduce(input, output);
        }
        input.clear();
        output.clear();
    }
}
