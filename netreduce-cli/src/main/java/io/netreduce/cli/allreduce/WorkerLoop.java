package io.netreduce.cli.allreduce;

import io.netreduce.wire.ina.InaHeader;

import io.netreduce.collectives.Collectives;
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
 * size and placement, out of place ({@code allReduce(input, output)}, as nccl-tests times
 * {@code ncclAllReduce(sendbuff, recvbuff)}) and in place, a checked all-reduce against
 * {@link Reference} and warm-up runs; then the two placements' timed runs (mean time and
 * process CPU per all-reduce) in alternating blocks, each after a barrier.
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
    /** Blocks each placement's timed calls are split into, alternating with the other placement's. */
    private static final int BLOCKS = 4;

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
        this.input = Collectives.allocateTensor(maxBytes / Float.BYTES);
        this.output = Collectives.allocateTensor(maxBytes / Float.BYTES);
    }

    /** Runs every size with the communicator's algorithm, reporting under {@code algorithm}. */
    public void run(String algorithm) {
        warmUpCompiler();
        boolean[] placements = workload.outOfPlace() && workload.inPlace() ? new boolean[] {false, true}
                : new boolean[] {workload.inPlace()};
        Tally[] tallies = new Tally[placements.length];
        for (long size : workload.sizes()) {
            int count = (int) (size / 4);
            for (int p = 0; p < placements.length; p++) {
                tallies[p] = prepare(count, placements[p]);
            }
            // Both placements' timed calls alternate in blocks, A B B A A B B A: measured one
            // after the other, whichever ran first ran slower (64 MiB over tcp, P = 2: out of
            // place 0.67x in place's busbw when first, 1.27x when second), so a placement's
            // figure must not depend on its turn.
            int blocks = placements.length > 1 ? BLOCKS : 1;
            for (int b = 0; b < blocks; b++) {
                for (int k = 0; k < placements.length; k++) {
                    int p = b % 2 == 0 ? k : placements.length - 1 - k;
                    Tally t = tallies[p];
                    timedBlock(count, placements[p], (int) ((long) t.iterations * (b + 1) / blocks
                            - (long) t.iterations * b / blocks), t);
                }
            }
            for (int p = 0; p < placements.length; p++) {
                results.accept(tallies[p].result(comm.rank(), algorithm, size, count, placements[p]));
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

    /** The checked call, the warm-up and the agreed count of timed calls of one placement at one size. */
    private Tally prepare(int count, boolean inPlace) {
        Reference.fill(input, comm.rank(), count);
        // Start every size together: filling and checking take rank-dependent time.
        comm.barrier();
        Tally t = new Tally();
        if (workload.check()) {
            runOnce(count, inPlace);
            t.wrong = Reference.countWrong(inPlace ? input : output, comm.size(), count);
        }
        // With time-based counts at least one warm-up call, to learn the pace from.
        int warmups = workload.secondsPerSize() > 0 ? Math.max(1, workload.warmup()) : workload.warmup();
        long warmupStart = System.nanoTime();
        warmUp(count, inPlace, warmups);
        t.iterations = agreeOnCounts(count, inPlace, warmups, System.nanoTime() - warmupStart);
        return t;
    }

    /** {@code calls} timed calls of one placement, added to its tally (every rank the same number). */
    private void timedBlock(int count, boolean inPlace, int calls, Tally t) {
        if (calls == 0) {
            return;
        }
        if (inPlace) {
            Reference.fill(input, comm.rank(), count);
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
        for (int i = 0; i < calls; i++) {
            if (inPlace && i > 0 && i % REFILL_EVERY == 0) {
                long f0 = THREAD_CPU.getCurrentThreadCpuTime();
                Reference.fill(input, comm.rank(), count);
                refillCpu += THREAD_CPU.getCurrentThreadCpuTime() - f0;
            }
            long t0 = System.nanoTime();
            runOnce(count, inPlace);
            elapsed += System.nanoTime() - t0;
        }
        long cpu = cpuClock.elapsedNanos();
        long[] moved = MeteredVerbsProvider.totals();
        long switchAfter = switchCpu.nanos();
        t.calls += calls;
        t.elapsed += elapsed;
        t.cpu = cpu < 0 || t.cpu < 0 ? -1 : t.cpu + Math.max(0, cpu - refillCpu);
        for (int c = 0; c < moved.length; c++) {
            t.moved[c] += moved[c] - before[c];
        }
        t.switchNanos = switchBefore < 0 || switchAfter < switchBefore || t.switchNanos < 0 ? -1
                : t.switchNanos + switchAfter - switchBefore;
    }

    /** One placement's timed calls at one size, summed over its blocks. */
    private static final class Tally {
        int iterations;
        long wrong;
        int calls;
        long elapsed;
        /** Process CPU over the timed calls, -1 where the JVM cannot tell. */
        long cpu;
        /** The switch data plane's CPU over them, -1 where it cannot be read. */
        long switchNanos;
        final long[] moved = new long[Counter.values().length];

        RankResult result(int rank, String algorithm, long size, int count, boolean inPlace) {
            Map<String, Long> counters = new LinkedHashMap<>();
            for (Counter c : Counter.values()) {
                if (moved[c.ordinal()] != 0) {
                    counters.put(RankResult.counterName(c), moved[c.ordinal()]);
                }
            }
            long wire = moved[Counter.BYTES_SENT.ordinal()] / calls;
            double timeUs = elapsed / 1e3 / calls;
            double cpuSeconds = cpu < 0 ? Double.NaN : cpu / 1e9 / calls;
            return new RankResult(rank, algorithm, size, count, inPlace, calls, timeUs, wrong, wire,
                    moved[Counter.RETRANSMITTED_PACKETS.ordinal()], moved[Counter.ACK_TIMEOUTS.ordinal()], cpuSeconds,
                    counters, switchNanos < 0 ? Double.NaN : SwitchCpu.perCall(0, switchNanos, calls));
        }
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
