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
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One rank's measurement loop, run identically on every rank of a communicator: for each
 * size and placement, out of place ({@code allReduce(input, output)}, as nccl-tests times
 * {@code ncclAllReduce(sendbuff, recvbuff)}) and in place, a checked all-reduce against
 * {@link Reference} and warm-up runs; then the two placements' timed runs (mean time and
 * process CPU per all-reduce) in alternating blocks, each after a barrier.
 *
 * <p>Given several communicators of the same ranks (one per algorithm, all open at once),
 * it times every algorithm's calls in the same alternating blocks, so that their figures
 * come from the same seconds of the same processes: on a shared machine the same command's
 * speed moves by several times from one run to the next, in spells of seconds, and two
 * algorithms measured one run after the other compare spells as much as algorithms. The
 * first communicator carries the loop's own barriers and agreements.
 *
 * <p>Tensors are slices of two direct buffers in the payload byte order, allocated once
 * for the largest size, so each communicator registers them once and never stages.
 */
public final class WorkerLoop {
    private static final Logger LOG = LoggerFactory.getLogger(WorkerLoop.class);
    /** In-place runs multiply the values by P; refill (untimed) this often to keep them finite. */
    private static final int REFILL_EVERY = 8;
    private static final ThreadMXBean THREAD_CPU = ManagementFactory.getThreadMXBean();
    /** Bytes all-reduced per size in each round of the compiler warm-up (at least {@link #WARMUP_BACK_TO_BACK} calls). */
    private static final long WARMUP_ROUND_BYTES = 1 << 20;
    /**
     * The fewest calls back to back per size and placement in a warm-up round, as the timed
     * blocks make them: there a neighbour's next call often arrives before this rank's has
     * begun, a branch that single calls between barriers never take. With one call per round
     * at large sizes, the JIT compiled the hot path without it and recompiled it through the
     * first timed blocks (traps in the ring's exchange and the tcp provider's progress, 64 MiB,
     * P = 2: 1.2-1.5x the steady time).
     */
    private static final int WARMUP_BACK_TO_BACK = 4;
    /** The most calls timed (or warmed up) per size: exact as a float, which the counts travel as. */
    private static final long MAX_ITERATIONS = 1 << 20;
    /** A rank whose compilers took more than this share of a warm-up window's wall time is still warming up. */
    private static final double COMPILING_SHARE = 0.05;
    /**
     * The compiler warm-up judges the JIT over windows of at least this long (whole rounds),
     * not single rounds: a compilation's time is counted when it ends, so one that outlasts
     * a round would leave that round looking quiet.
     */
    private static final long COMPILER_WINDOW_NANOS = 1_000_000_000L;
    /**
     * Quiet windows in a row that end the warm-up: the JIT works in bursts (a hot loop's
     * compilation, then the traps and recompilations that the other placement's branches
     * cause), with quiet seconds between them.
     */
    private static final int QUIET_WINDOWS = 3;
    /** The compiler warm-up ends at this many times the asked time, compiled or not. */
    private static final double WARMUP_CAP = 5;
    /** Blocks each variant's (algorithm and placement) timed calls are split into, alternating with the others'. */
    private static final int BLOCKS = 4;

    /** The communicators timed, each under its algorithm's name; the first one carries the loop's control. */
    private final List<Member> members;
    /** The first member's: barriers, the agreed counts and the warm-up's votes. */
    private final Communicator comm;
    private final Workload workload;
    private final Consumer<RankResult> results;
    private final FloatBuffer input;
    private final FloatBuffer output;
    /** Rank 0's decision on a size's timed and extra warm-up calls, broadcast to the others. */
    private final FloatBuffer counts = ByteBuffer.allocateDirect(8).order(InaHeader.PAYLOAD_ORDER).asFloatBuffer();

    /**
     * A communicator timed under {@code algorithm}'s name, with the switch whose data-plane CPU
     * rank 0 reports beside its own ({@link SwitchCpu#of}; {@link SwitchCpu#NONE} for none).
     */
    public record Member(String algorithm, Communicator comm, SwitchCpu switchCpu) {
    }

    /** One communicator. */
    public WorkerLoop(String algorithm, Communicator comm, SwitchCpu switchCpu, Workload workload,
                      Consumer<RankResult> results) {
        this(List.of(new Member(algorithm, comm, switchCpu)), workload, results);
    }

    /** Several communicators of the same ranks, timed in the same alternating blocks. */
    public WorkerLoop(List<Member> members, Workload workload, Consumer<RankResult> results) {
        if (members.isEmpty()) {
            throw new IllegalArgumentException("no communicator to time");
        }
        this.comm = members.get(0).comm();
        for (Member m : members) {
            if (m.comm().rank() != comm.rank() || m.comm().size() != comm.size()) {
                throw new IllegalArgumentException("communicators of different ranks: " + m.algorithm() + " is rank "
                        + m.comm().rank() + " of " + m.comm().size() + ", " + members.get(0).algorithm() + " rank "
                        + comm.rank() + " of " + comm.size());
            }
        }
        this.members = List.copyOf(members);
        this.workload = workload;
        this.results = results;
        int maxBytes = (int) workload.maxSize();
        this.input = Collectives.allocateTensor(maxBytes / Float.BYTES);
        this.output = Collectives.allocateTensor(maxBytes / Float.BYTES);
    }

    /** Runs every size with every member, reporting each under its algorithm's name. */
    public void run() {
        warmUpCompiler();
        List<Variant> variants = new ArrayList<>();
        for (Member m : members) {
            if (workload.outOfPlace()) {
                variants.add(new Variant(m, false));
            }
            if (workload.inPlace()) {
                variants.add(new Variant(m, true));
            }
        }
        for (long size : workload.sizes()) {
            int count = (int) (size / 4);
            for (Variant v : variants) {
                v.tally = prepare(v, count);
            }
            // Every variant's timed calls alternate in blocks, A B B A A B B A: measured one
            // after the other, whichever ran first ran slower (64 MiB over tcp, P = 2: out of
            // place 0.67x in place's busbw when first, 1.27x when second), so a variant's
            // figure must not depend on its turn.
            int blocks = variants.size() > 1 ? BLOCKS : 1;
            for (int b = 0; b < blocks; b++) {
                for (int k = 0; k < variants.size(); k++) {
                    Variant v = variants.get(b % 2 == 0 ? k : variants.size() - 1 - k);
                    long n = v.tally.iterations;
                    timedBlock(v, count, (int) (n * (b + 1) / blocks - n * b / blocks));
                }
            }
            for (Variant v : variants) {
                results.accept(v.tally.result(comm.rank(), v.member.algorithm(), size, count, v.inPlace));
            }
        }
    }

    /** One member at one placement, and its tally at the current size. */
    private static final class Variant {
        final Member member;
        final boolean inPlace;
        /** Rank 0 reads the switch; the others report nothing for it. */
        final SwitchCpu switchCpu;
        Tally tally;

        Variant(Member member, boolean inPlace) {
            this.member = member;
            this.inPlace = inPlace;
            this.switchCpu = member.comm().rank() == 0 ? member.switchCpu() : SwitchCpu.NONE;
        }
    }

    /**
     * Untimed calls over every size and placement for at least
     * {@link Workload#warmupSeconds()} and until no rank's JIT is still busy: a fresh JVM
     * interprets, then compiles, the hot paths over its first seconds, and where P ranks
     * share two cores their compilers share them too (measured: 4 ranks, 3 s, the first
     * sizes still 5-40× their steady time; 2 ranks over tcp, 64 MiB, compilations went on
     * for 23 s and calls took 1.5× their steady time until then). A rank is still busy until
     * its compilers took at most {@link #COMPILING_SHARE} of the wall time in
     * {@link #QUIET_WINDOWS} windows in a row of {@link #COMPILER_WINDOW_NANOS}; the warm-up
     * stops at {@link #WARMUP_CAP} times the asked time whatever the compilers do. Every
     * rank's wish is summed by an all-reduce after each round, so every rank makes the same
     * calls.
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
        long windowStart = start;
        long compiledAtWindowStart = jitTimed ? jit.getTotalCompilationTime() : 0;
        int quietWindows = 0;
        do {
            // The same calls as the measurement (barriers, checked runs, both placements, the
            // clocks and counters read around a timed block), so that the code compiled for the
            // warm-up is the code the timed runs take.
            ProcessCpu clocks = ProcessCpu.start();
            MeteredVerbsProvider.totals();
            for (long size : workload.sizes()) {
                int count = (int) (size / 4);
                for (int m = 0; m < members.size() * 2; m++) {
                    Communicator c = members.get(m / 2).comm();
                    boolean inPlace = m % 2 == 1;
                    Reference.fill(input, comm.rank(), count);
                    comm.barrier();
                    for (int i = 0; i < Math.max(WARMUP_BACK_TO_BACK, WARMUP_ROUND_BYTES / size); i++) {
                        runOnce(c, count, inPlace);
                        if (i == 0) {
                            Reference.countWrong(inPlace ? input : output, comm.size(), count);
                        }
                        if (inPlace && i % REFILL_EVERY == REFILL_EVERY - 1) {
                            Reference.fill(input, comm.rank(), count);
                        }
                    }
                }
            }
            clocks.elapsedNanos();
            long now = System.nanoTime();
            if (now - windowStart >= COMPILER_WINDOW_NANOS) {
                long compiled = jitTimed ? jit.getTotalCompilationTime() : 0;
                boolean quiet = compiled - compiledAtWindowStart <= COMPILING_SHARE * (now - windowStart) / 1e6;
                quietWindows = quiet ? quietWindows + 1 : 0;
                windowStart = now;
                compiledAtWindowStart = compiled;
            }
            boolean compiling = jitTimed && quietWindows < QUIET_WINDOWS;
            boolean wanted = now < most && (now < least || compiling);
            // The vote travels in the buffer the timed sizes agree their counts in, and rank 0's
            // sum is broadcast as those counts are: a collective or a buffer first met after the
            // warm-up traps out of the compiled communicator, and its recompiling then took a
            // core's 0.8-1.0 s over the first timed sizes (P = 2, tcp, 2-4 MiB).
            counts.put(0, wanted ? 1 : 0).put(1, 0);
            comm.allReduce(counts); // sums of 0s and 1s: exact, and every algorithm sums
            comm.broadcast(counts, 0);
        } while (counts.get(0) != 0);
        if (comm.rank() == 0) {
            LOG.info("JIT warm-up took {} s ({})", String.format(Locale.ROOT, "%.1f", (System.nanoTime() - start) / 1e9),
                    quietWindows >= QUIET_WINDOWS ? "its compilers quiet"
                            : jitTimed ? "stopped at " + WARMUP_CAP + "x the asked time, compilers still busy" : "no JIT timing");
        }
    }

    /** The checked call, the warm-up and the agreed count of timed calls of one variant at one size. */
    private Tally prepare(Variant v, int count) {
        Communicator c = v.member.comm();
        boolean inPlace = v.inPlace;
        Reference.fill(input, comm.rank(), count);
        // Start every size together: filling and checking take rank-dependent time.
        comm.barrier();
        Tally t = new Tally();
        if (workload.check()) {
            runOnce(c, count, inPlace);
            t.wrong = Reference.countWrong(inPlace ? input : output, comm.size(), count);
        }
        // With time-based counts at least one warm-up call, to learn the pace from.
        int warmups = workload.exactCounts() ? workload.warmup() : Math.max(1, workload.warmup());
        long warmupStart = System.nanoTime();
        warmUp(c, count, inPlace, warmups);
        t.iterations = agreeOnCounts(c, count, inPlace, warmups, System.nanoTime() - warmupStart);
        return t;
    }

    /** {@code calls} timed calls of one variant, added to its tally (every rank the same number). */
    private void timedBlock(Variant v, int count, int calls) {
        if (calls == 0) {
            return;
        }
        Communicator c = v.member.comm();
        boolean inPlace = v.inPlace;
        SwitchCpu switchCpu = v.switchCpu;
        Tally t = v.tally;
        if (inPlace) {
            Reference.fill(input, comm.rank(), count);
        }
        // Read before the barrier (the others' first packets must not reach the switch before
        // it) and after this rank's clocks stop: the HTTP round trip is not the collective's.
        long switchBefore = switchCpu.nanos();
        comm.barrier();
        long[] before = MeteredVerbsProvider.totals();
        t.makeRoom(calls);
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
            if (workload.pauseMillis() > 0) {
                pause(workload.pauseMillis());
            }
            long t0 = System.nanoTime();
            runOnce(c, count, inPlace);
            long took = System.nanoTime() - t0;
            elapsed += took;
            t.callNanos[t.calls + i] = took;
        }
        long cpu = cpuClock.elapsedNanos();
        long[] moved = MeteredVerbsProvider.totals();
        long switchAfter = switchCpu.nanos();
        t.calls += calls;
        t.elapsed += elapsed;
        t.cpu = cpu < 0 || t.cpu < 0 ? -1 : t.cpu + Math.max(0, cpu - refillCpu);
        for (int k = 0; k < moved.length; k++) {
            t.moved[k] += moved[k] - before[k];
        }
        t.switchNanos = switchBefore < 0 || switchAfter < switchBefore || t.switchNanos < 0 ? -1
                : t.switchNanos + switchAfter - switchBefore;
    }

    /** One variant's timed calls at one size, summed over its blocks. */
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
        /** Each timed call's time, in the order made: the first {@link #calls}. */
        long[] callNanos = new long[64];

        /** Room for {@code more} calls' times, made before they are timed. */
        void makeRoom(int more) {
            if (calls + more > callNanos.length) {
                callNanos = Arrays.copyOf(callNanos, Math.max(calls + more, 2 * callNanos.length));
            }
        }

        /** The {@code q} quantile (nearest rank) of the timed calls' times, µs. */
        double quantileUs(long[] sorted, double q) {
            return calls == 0 ? Double.NaN : sorted[Math.max(0, (int) Math.ceil(q * calls) - 1)] / 1e3;
        }

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
            long[] sorted = Arrays.copyOf(callNanos, calls);
            Arrays.sort(sorted);
            return new RankResult(rank, algorithm, size, count, inPlace, calls, timeUs, wrong, wire,
                    moved[Counter.RETRANSMITTED_PACKETS.ordinal()], moved[Counter.ACK_TIMEOUTS.ordinal()], cpuSeconds,
                    counters, switchNanos < 0 ? Double.NaN : SwitchCpu.perCall(0, switchNanos, calls),
                    quantileUs(sorted, 0.5), quantileUs(sorted, 0.99));
        }
    }

    private void warmUp(Communicator c, int count, boolean inPlace, int calls) {
        for (int i = 0; i < calls; i++) {
            if (inPlace && i % REFILL_EVERY == 0) {
                Reference.fill(input, comm.rank(), count);
            }
            runOnce(c, count, inPlace);
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
    private int agreeOnCounts(Communicator c, int count, boolean inPlace, int warmups, long warmupNanos) {
        if (workload.exactCounts()) {
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
        warmUp(c, count, inPlace, (int) counts.get(1));
        return (int) counts.get(0);
    }

    /** The compute phase of a training loop, stood in for by sleeping: no polling meanwhile. */
    private static void pause(int millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted in the pause before a timed call", e);
        }
    }

    private void runOnce(Communicator c, int count, boolean inPlace) {
        if (inPlace) {
            input.limit(count).position(0);
            c.allReduce(input);
        } else {
            input.limit(count).position(0);
            output.limit(count).position(0);
            c.allReduce(input, output);
        }
        input.clear();
        output.clear();
    }
}
