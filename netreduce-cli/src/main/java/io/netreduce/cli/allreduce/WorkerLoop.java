package io.netreduce.cli.allreduce;

import io.netreduce.wire.ina.InaHeader;

import io.netreduce.collectives.Communicator;
import io.netreduce.collectives.algorithm.MessagePlan;
import io.netreduce.verbs.Counter;
import java.nio.ByteBuffer;
import java.nio.FloatBuffer;
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

    private final Communicator comm;
    private final Workload workload;
    private final Consumer<RankResult> results;
    private final FloatBuffer input;
    private final FloatBuffer output;

    public WorkerLoop(Communicator comm, Workload workload, Consumer<RankResult> results) {
        this.comm = comm;
        this.workload = workload;
        this.results = results;
        int maxBytes = (int) workload.maxSize();
        this.input = ByteBuffer.allocateDirect(maxBytes).order(InaHeader.PAYLOAD_ORDER).asFloatBuffer();
        this.output = ByteBuffer.allocateDirect(maxBytes).order(InaHeader.PAYLOAD_ORDER).asFloatBuffer();
    }

    /** Runs every size with the communicator's algorithm, reporting under {@code algorithm}. */
    public void run(String algorithm) {
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
        for (int i = 0; i < workload.warmup(); i++) {
            if (inPlace && i % REFILL_EVERY == 0) {
                Reference.fill(input, rank, count);
            }
            runOnce(count, inPlace);
        }
        if (inPlace) {
            Reference.fill(input, rank, count);
        }
        comm.barrier();
        long bytesBefore = MeteredVerbsProvider.total(Counter.BYTES_SENT);
        long retransBefore = MeteredVerbsProvider.total(Counter.RETRANSMITTED_PACKETS);
        long elapsed = 0;
        ProcessCpu cpuClock = ProcessCpu.start();
        for (int i = 0; i < workload.iterations(); i++) {
            if (inPlace && i > 0 && i % REFILL_EVERY == 0) {
                Reference.fill(input, rank, count);
            }
            long t0 = System.nanoTime();
            runOnce(count, inPlace);
            elapsed += System.nanoTime() - t0;
        }
        long cpu = cpuClock.elapsedNanos();
        long wire = (MeteredVerbsProvider.total(Counter.BYTES_SENT) - bytesBefore) / workload.iterations();
        long retrans = MeteredVerbsProvider.total(Counter.RETRANSMITTED_PACKETS) - retransBefore;
        double timeUs = elapsed / 1e3 / workload.iterations();
        double cpuSeconds = cpu < 0 ? Double.NaN : cpu / 1e9 / workload.iterations();
        return new RankResult(rank, algorithm, size, count, inPlace, workload.iterations(), timeUs, wrong, wire,
                retrans, cpuSeconds);
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
