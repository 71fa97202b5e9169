package io.netreduce.collectives.algorithm.ring;

import io.netreduce.collectives.ReduceOp;
import io.netreduce.collectives.algorithm.CallHeader;
import io.netreduce.collectives.algorithm.CallMismatchException;
import io.netreduce.collectives.algorithm.CollectiveCall;
import io.netreduce.collectives.algorithm.CompletionPump;
import io.netreduce.collectives.algorithm.HostException;
import io.netreduce.collectives.algorithm.ResultMismatchException;
import io.netreduce.collectives.algorithm.kernel.ReductionKernel;
import io.netreduce.verbs.Access;
import io.netreduce.verbs.MemoryRegion;
import io.netreduce.verbs.ProtectionDomain;
import io.netreduce.verbs.QueuePair;
import io.netreduce.verbs.RecvRequest;
import io.netreduce.verbs.SendRequest;
import io.netreduce.verbs.VerbsException;
import io.netreduce.verbs.WcOpcode;
import io.netreduce.verbs.WorkCompletion;
import io.netreduce.collectives.algorithm.DirectBuffers;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.EnumSet;
import java.util.function.Supplier;

/**
 * The all-reduce schedules over {@link PartnerConnections}, for P = 2^L ranks: recursive
 * doubling for small tensors, and for mid-sized ones recursive halving then recursive
 * doubling (Rabenseifner's schedule, Open MPI's default there) ({@link #run}):
 * 2L steps where the ring takes 2(P-1), each rank sending 2(P-1)/P of the tensor as the
 * ring does. The tensor is cut into P chunks as the ring cuts it (chunk c is elements
 * [c·n/P, (c+1)·n/P)).
 * <ul>
 *   <li>Reduce-scatter, step k = 0..L-1, bit b = L-1-k: this rank and partner
 *       {@code rank ^ 2^b} share a segment of 2^(b+1) chunks; each sends the half the other
 *       keeps (the half whose chunks have bit b of the receiver's rank) and combines what
 *       arrives into the half it keeps, {@code received op local}. After L steps rank r
 *       holds chunk r complete.</li>
 *   <li>All-gather, step j = 0..L-1: partners {@code rank ^ 2^j} swap the 2^j complete
 *       chunks each holds, unchanged, so every rank ends with the same bits.</li>
 * </ul>
 * Summation order (documented, and what the tests check): with {@code p(r, -1) = x_r} and
 * {@code p(r, k) = p(r ^ 2^(L-1-k), k-1) op p(r, k-1)}, chunk c of the result is
 * {@code p(c, L-1)}, computed by rank c alone.
 *
 * <p>Small tensors take recursive doubling over the same partners ({@link #runRecursiveDoubling}):
 * L steps, each swapping the whole partial sum with partner {@code rank ^ 2^k} and combining
 * the lower rank's partial with the higher's, so that both partners compute the same bits
 * (NaN payloads included) and chunk boundaries play no part: the result is the pairwise tree
 * {@code t(group) = t(lower half) op t(upper half)} over ranks in order, on every rank. It
 * sends log2(P)·n bytes in log2(P) steps, where the ring's small-tensor gather sends (P-1)·n
 * in P-1 steps, and halving-doubling 2(P-1)/P·n in 2·log2(P).
 *
 * <p>Each message is {@code [call header, segment]}, one per step, and a rank checks each
 * partner's call against its own before using its data, as the ring does. A step's message
 * waits for the previous step's result, so every receive lands in staging, {@link #SLOTS} per
 * partner posted ahead: a partner that finishes an operation first sends the next one's first
 * message at once, and must find a receive posted (else an RNR NAK and the RNR timer).
 * Messages are numbered per partner, whatever the schedule; an operation takes at most
 * {@link #PER_OP} per partner and reposts the slots it consumed as it returns, once its sends
 * (which may read staging) are complete. No allocation per message (per call, only the views
 * of the tensors, as the ring's).
 */
final class PartnerAllReduce implements AutoCloseable {
    private static final int HEADER = CallHeader.LENGTH;
    /**
     * Messages per partner per operation, the reduce-scatter's then the all-gather's: the
     * most sends a partner queue pair holds, as an operation returns once its sends complete.
     */
    static final int PER_OP = 2;
    /** Receive slots per partner: this operation's and the next one's (the receives a partner queue pair holds). */
    static final int SLOTS = 2 * PER_OP;
    private static final int LEVEL_SHIFT = 48;
    private static final long INDEX_MASK = (1L << LEVEL_SHIFT) - 1;

    private final QueuePair[] partners;
    private final int rank;
    private final int size;
    private final int levels;
    private final int maxElements;
    private final CompletionPump pump;
    /** Receive headers (levels × SLOTS), then send headers (levels × PER_OP). */
    private final MemoryRegion headers;
    private final ByteBuffer headerBytes;
    private final MemoryRegion staging;
    private final ByteBuffer stagingElements;
    /** Per level: the element where its first receive slot starts, and elements per slot. */
    private final int[] slotBase;
    private final int[] slotElements;
    /** Per level: receives completed so far, over every operation (they complete in order). */
    private final long[] arrived;
    /** Per level: messages whose data has been used, receives posted, and messages sent, over every operation. */
    private final long[] consumed;
    private final long[] recvsPosted;
    private final long[] sent;
    /** Byte lengths of completed receives, by level × SLOTS + slot. */
    private final int[] arrivedBytes;
    private final CallHeader header = new CallHeader();
    private final SendRequest send = new SendRequest(2);
    private final RecvRequest recv = new RecvRequest(2);
    /** Step 0 combines into the kept half from the input; later steps from the output's partials. */
    private final ReductionKernel fromInput = ReductionKernel.create();
    private final ReductionKernel fromOutput = ReductionKernel.create();
    /**
     * Recursive doubling: step 0 combines the input with what arrived into staging (in
     * either order), later steps staging with staging, into staging or, the last, the output.
     */
    private final ReductionKernel receivedFirst = ReductionKernel.create();
    private final ReductionKernel inputFirst = ReductionKernel.create();
    private final ReductionKernel withinStaging = ReductionKernel.create();
    private final ReductionKernel intoOutput = ReductionKernel.create();
    private final Supplier<String> context = this::describe;

    private long sendsPosted;
    /** Recursive doubling in place: the send of the tensor itself (step 0), whose completion the last step awaits. */
    private long tensorSend = -1;
    private long sendsDone;
    private CollectiveCall call;
    private int elements;
    private ByteBuffer outputElements;
    /** What this rank waits for, for error messages. */
    private int waitLevel;
    private long waitMessage;

    /** {@code maxElements}: the largest tensor an operation may carry. */
    PartnerAllReduce(ProtectionDomain pd, PartnerConnections links, int rank, int size, int maxElements,
                     Duration timeout) {
        this.partners = links.partners;
        this.rank = rank;
        this.size = size;
        this.levels = partners.length;
        this.maxElements = maxElements;
        this.pump = new CompletionPump(links.cq, 16, timeout);
        this.slotBase = new int[levels];
        this.slotElements = new int[levels];
        int total = 0;
        for (int b = 0; b < levels; b++) {
            slotBase[b] = total;
            // 2^b whole chunks, each at most one element above n/P
            slotElements[b] = (int) ((long) maxElements * (1 << b) / size) + (1 << b);
            total += SLOTS * slotElements[b];
        }
        this.headers = pd.register(ByteBuffer.allocateDirect(levels * (SLOTS + PER_OP) * HEADER),
                EnumSet.of(Access.LOCAL_WRITE));
        this.headerBytes = headers.buffer();
        this.staging = pd.register(DirectBuffers.allocate(4 * total), EnumSet.of(Access.LOCAL_WRITE));
        this.stagingElements = RingAllReduce.elementsAt(staging, 0);
        this.arrived = new long[levels];
        this.consumed = new long[levels];
        this.recvsPosted = new long[levels];
        this.sent = new long[levels];
        this.arrivedBytes = new int[levels * SLOTS];
        repostConsumed();
    }

    /** The largest tensor (elements) an operation may carry. */
    int maxElements() {
        return maxElements;
    }

    /** The largest tensor (elements) {@link #runRecursiveDoubling} may carry: what a level-0 slot holds. */
    int maxRecursiveDoublingElements() {
        return slotElements[0];
    }

    /** Time spent waiting for completions so far, in nanoseconds. */
    long waitNanos() {
        return pump.waitNanos();
    }

    /**
     * All-reduces {@code n} (0 < n ≤ {@link #maxElements()}) elements at byte {@code inOffset}
     * of {@code input} into byte {@code outOffset} of {@code output} (the same for in place),
     * combining with {@code call.combine()}.
     */
    void run(CollectiveCall c, MemoryRegion input, int inOffset, MemoryRegion output, int outOffset, int n) {
        if (n <= 0 || n > maxElements) {
            throw new IllegalArgumentException("halving-doubling all-reduce of " + n + " elements (1.." + maxElements + ")");
        }
        call = c;
        elements = n;
        ReduceOp op = c.combine();
        ByteBuffer inputElements = RingAllReduce.elementsAt(input, inOffset);
        outputElements = input == output && inOffset == outOffset ? inputElements : RingAllReduce.elementsAt(output, outOffset);
        fromInput.bind(stagingElements, inputElements, outputElements);
        fromOutput.bind(stagingElements, outputElements, outputElements);
        int lo = 0;
        for (int k = 0; k < levels; k++) {
            int b = levels - 1 - k;
            int d = 1 << b;
            int keep = (rank & d) != 0 ? lo + d : lo;
            int give = keep == lo ? lo + d : lo;
            if (k == 0) {
                post(b, input, inOffset, give, d);
            } else {
                post(b, output, outOffset, give, d);
            }
            int at = chunkStart(keep);
            int count = chunkStart(keep + d) - at;
            int from = arrival(b, count);
            (k == 0 ? fromInput : fromOutput).apply(op, from, at, at, count); // received op local
            consumed[b]++;
            lo = keep;
        }
        for (int j = 0; j < levels; j++) {
            int d = 1 << j;
            int own = rank & ~(d - 1);
            int theirs = own ^ d;
            post(j, output, outOffset, own, d);
            int at = chunkStart(theirs);
            int count = chunkStart(theirs + d) - at;
            int from = arrival(j, count);
            outputElements.put(4 * at, stagingElements, 4 * from, 4 * count);
            consumed[j]++;
        }
        finish();
    }

    /**
     * All-reduces {@code n} (0 < n ≤ {@link #maxRecursiveDoublingElements()}) elements as
     * {@link #run} does, by recursive doubling. Partials after step 0 live in the staging
     * slot their step's message arrived in (sent from there at the next step, so no send
     * ever reads a buffer that a combine writes); in place, the last step's combine into the
     * tensor first waits for step 0's send of it.
     */
    void runRecursiveDoubling(CollectiveCall c, MemoryRegion input, int inOffset, MemoryRegion output, int outOffset,
                              int n) {
        if (n <= 0 || n > slotElements[0]) {
            throw new IllegalArgumentException("recursive-doubling all-reduce of " + n + " elements (1.."
                    + slotElements[0] + ")");
        }
        call = c;
        elements = n;
        ReduceOp op = c.combine();
        ByteBuffer inputElements = RingAllReduce.elementsAt(input, inOffset);
        boolean inPlace = input == output && inOffset == outOffset;
        outputElements = inPlace ? inputElements : RingAllReduce.elementsAt(output, outOffset);
        receivedFirst.bind(stagingElements, inputElements, stagingElements);
        inputFirst.bind(inputElements, stagingElements, stagingElements);
        withinStaging.bind(stagingElements, stagingElements, stagingElements);
        intoOutput.bind(stagingElements, stagingElements, outputElements);
        tensorSend = inPlace ? sendsPosted : -1;
        int partial = -1; // staging element of the partial sum after step 0
        for (int b = 0; b < levels; b++) {
            if (b == 0) {
                post(b, input, inOffset, 0, size);
            } else {
                postStaged(b, partial, n);
            }
            int from = arrival(b, n);
            boolean receivedIsLower = (rank ^ (1 << b)) < rank;
            if (b == 0) {
                if (receivedIsLower) {
                    receivedFirst.apply(op, from, 0, from, n);
                } else {
                    inputFirst.apply(op, 0, from, from, n);
                }
            } else {
                boolean last = b == levels - 1;
                while (last && tensorSend >= 0) {
                    waitLevel = -1;
                    poll();
                }
                (last ? intoOutput : withinStaging).apply(op, receivedIsLower ? from : partial,
                        receivedIsLower ? partial : from, last ? 0 : from, n);
            }
            consumed[b]++;
            partial = from;
        }
        finish();
    }

    /**
     * Waits for this operation's sends, then reposts the receives it consumed and lets go of
     * the ACKs the partners' queue pairs hold back for a reply to carry: the caller may now
     * compute for a long time, and a partner's last send completes only with that ACK (held,
     * it waited for the provider's idle drive: 10-18 ms a call at P = 4, 4 KiB, with 20 ms of
     * compute between calls, against 1.1 ms released; docs/benchmarks.md, small tensors).
     */
    private void finish() {
        while (sendsDone < sendsPosted) {
            waitLevel = -1;
            poll();
        }
        repostConsumed();
        for (QueuePair qp : partners) {
            qp.releaseHeldAck();
        }
    }

    /** Keeps {@link #SLOTS} receives per partner posted beyond the messages consumed. */
    private void repostConsumed() {
        for (int b = 0; b < levels; b++) {
            while (recvsPosted[b] < consumed[b] + SLOTS) {
                postRecv(b, recvsPosted[b]++);
            }
        }
    }

    private int chunkStart(int c) {
        return (int) ((long) c * elements / size);
    }

    /** Sends chunks [firstChunk, firstChunk + d) of the tensor at {@code offset} of {@code region} to level b's partner. */
    private void post(int b, MemoryRegion region, int offset, int firstChunk, int d) {
        int from = chunkStart(firstChunk);
        postSegment(b, region, offset + 4 * from, 4 * (chunkStart(firstChunk + d) - from));
    }

    /** Sends {@code count} elements of staging from element {@code from} to level b's partner. */
    private void postStaged(int b, int from, int count) {
        postSegment(b, staging, 4 * from, 4 * count);
    }

    private void postSegment(int b, MemoryRegion region, int byteOffset, int bytes) {
        long message = sent[b]++;
        int slot = (levels * SLOTS + b * PER_OP + (int) (message % PER_OP)) * HEADER;
        header.wrap(headerBytes, slot).set(call, rank, (int) message, bytes);
        send.reset().wrId(sendsPosted);
        send.sgl().add(headers, slot, HEADER);
        if (bytes > 0) {
            send.sgl().add(region, byteOffset, bytes);
        }
        try {
            partners[b].postSend(send);
        } catch (VerbsException e) {
            throw new HostException("posting a halving-doubling message to rank " + (rank ^ (1 << b)) + " failed: "
                    + e.getMessage() + "; " + describe(), e);
        }
        sendsPosted++;
    }

    private void postRecv(int b, long message) {
        int slot = (int) (message % SLOTS);
        recv.reset().wrId(((long) b << LEVEL_SHIFT) | (message & INDEX_MASK));
        recv.sgl().add(headers, (b * SLOTS + slot) * HEADER, HEADER)
                .add(staging, 4 * (slotBase[b] + slot * slotElements[b]), 4 * slotElements[b]);
        try {
            partners[b].postRecv(recv);
        } catch (VerbsException e) {
            throw new HostException("posting a halving-doubling receive failed: " + e.getMessage() + "; " + describe(), e);
        }
    }

    /**
     * Waits for the next message from level b's partner (the first not {@link #consumed}),
     * checks its call, origin and length ({@code count} elements), and returns the staging
     * element it starts at.
     */
    private int arrival(int b, int count) {
        long message = consumed[b];
        waitLevel = b;
        waitMessage = message;
        while (arrived[b] <= message) {
            poll();
        }
        int slot = (int) (message % SLOTS);
        int partner = rank ^ (1 << b);
        header.wrap(headerBytes, (b * SLOTS + slot) * HEADER);
        if (!call.matches(header) || header.version() != CallHeader.VERSION) {
            throw new CallMismatchException("rank " + rank + ": rank " + partner + " sent a message of "
                    + header.describeCall() + " where this rank runs collective " + call);
        }
        int bytes = arrivedBytes[b * SLOTS + slot];
        if (header.rank() != partner || header.msgId() != (int) message || header.payloadLength() != 4 * count
                || bytes != HEADER + 4 * count) {
            throw new ResultMismatchException("rank " + rank + ": halving-doubling message " + message + " arrived as "
                    + bytes + " bytes with header " + header + "; expected " + 4 * count + " bytes from rank " + partner);
        }
        return slotBase[b] + slot * slotElements[b];
    }

    /** Takes what the completion queue has: receives in order per partner, and sends. */
    private void poll() {
        int n = pump.await(call.guard(), context);
        for (int i = 0; i < n; i++) {
            WorkCompletion wc = pump.completion(i);
            if (wc.opcode() != WcOpcode.RECV) {
                sendsDone++;
                if (wc.wrId() == tensorSend) {
                    tensorSend = -1;
                }
                continue;
            }
            int b = (int) (wc.wrId() >>> LEVEL_SHIFT);
            long message = arrived[b];
            if ((wc.wrId() & INDEX_MASK) != (message & INDEX_MASK)) {
                throw new HostException("rank " + rank + ": halving-doubling receive " + (wc.wrId() & INDEX_MASK)
                        + " from rank " + (rank ^ (1 << b)) + " completed where receive " + message + " was next");
            }
            arrivedBytes[b * SLOTS + (int) (message % SLOTS)] = wc.byteLength();
            arrived[b] = message + 1;
        }
    }

    private String describe() {
        String waiting = waitLevel < 0 ? "its messages' acknowledgements (" + sendsDone + " of " + sendsPosted + ")"
                : "message " + waitMessage + " from rank " + (rank ^ (1 << waitLevel));
        return "rank " + rank + " of " + size + " (halving-doubling, " + call + ", " + elements + " elements) waiting for "
                + waiting;
    }

    @Override
    public void close() {
        headers.close();
        staging.close();
    }
}
