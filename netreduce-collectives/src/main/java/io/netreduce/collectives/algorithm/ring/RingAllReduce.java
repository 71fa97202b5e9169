package io.netreduce.collectives.algorithm.ring;

import io.netreduce.collectives.ReduceOp;
import io.netreduce.collectives.algorithm.CallHeader;
import io.netreduce.collectives.algorithm.CallMismatchException;
import io.netreduce.collectives.algorithm.kernel.ReductionKernel;
import io.netreduce.collectives.algorithm.CollectiveCall;
import io.netreduce.collectives.algorithm.CompletionPump;
import io.netreduce.collectives.algorithm.MessagePlan;
import io.netreduce.collectives.algorithm.ResultMismatchException;
import io.netreduce.collectives.algorithm.HostException;
import io.netreduce.verbs.Access;
import io.netreduce.verbs.CompletionQueue;
import io.netreduce.verbs.MemoryRegion;
import io.netreduce.verbs.ProtectionDomain;
import io.netreduce.verbs.QueuePair;
import io.netreduce.verbs.RecvRequest;
import io.netreduce.verbs.SendRequest;
import io.netreduce.verbs.VerbsException;
import io.netreduce.verbs.WcOpcode;
import io.netreduce.verbs.WorkCompletion;
import io.netreduce.wire.ina.InaHeader;
import io.netreduce.collectives.algorithm.DirectBuffers;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.EnumSet;
import java.util.function.Supplier;

/**
 * Classic ring all-reduce with host-side summation (or MAX/MIN) over the NetReduce ring of queue pairs
 * (send to rank r+1, receive from rank r-1), pipelined in messages: 2(P-1) steps, the first
 * P-1 a reduce-scatter, the last P-1 an all-gather. At step s rank r sends chunk (r-s) mod P
 * and receives chunk (r-s-1) mod P; message k of step s is sent as soon as message k of
 * step s-1 has been received, so all steps overlap.
 *
 * <p>Summation order (documented, and what the tests check): chunk c of the tensor (the
 * elements [c·n/P, (c+1)·n/P)) is summed along the ring starting at rank c,
 * {@code (((x_c + x_{c+1}) + x_{c+2}) + ... + x_{c-1})} (indices mod P), by rank c-1; the
 * all-gather then copies that result unchanged to everyone, so all ranks hold the same bits.
 *
 * <p>Each message is {@code [call header, slice]} ({@link CallHeader}): every message carries
 * its sender's call, and a rank checks its predecessor's against its own before it uses any
 * of its data, so that ranks that called different collectives fail at the first message
 * instead of mixing tensors, with no agreement through the rendezvous store. Every rank's
 * result passes through every link of the ring, so a result is only ever returned when all
 * ranks made the same call. A call with an empty tensor still sends one header-only
 * message each way for that check. Reduce-scatter data lands in a registered staging ring
 * and is added to the input into the output; all-gather data lands directly in the output.
 *
 * <p>Out of place adds no pass over the tensor: the first step sends the input, and
 * reduce-scatter data lands straight in the output slice it is summed into ({@code out =
 * received op in}, in place over the bytes just written, still in cache), where in place it
 * lands in staging ({@code out = staging op out}). Summing out of place from staging with
 * non-temporal stores instead, which skip reading each output line before overwriting it,
 * measured 0.81-0.94x in place's busbw at 64 MiB over tcp, P = 2, in two sittings of three,
 * against 0.99-1.05x this way (docs/benchmarks.md). The operands and their order are the same
 * in place and out of place, so are the bits.
 *
 * <p>Receives for the next operation's first messages are posted ahead, into staging
 * slots of their own ({@link #aheadWanted} of them, from the shape of the operation just
 * run: at least as many as the caller asks, which for the ring algorithm is everything a
 * neighbour can send of a small-tensor operation before this rank joins it; after a larger
 * one, up to its first step's messages; after an all-reduce no more than its
 * reduce-scatter's): a neighbour may finish first and start the next operation, and a SEND
 * that finds no receive is answered with an RNR NAK and resent only after the RNR timer
 * (1.28 ms). With one look-ahead receive that hit about a third of back-to-back small
 * all-reduces at P = 2, and nearly all at P = 4. Those receives span operations: each
 * operation takes what was posted for it from the front of the queue, posts its own, then
 * the next one's; a message that arrived ahead is reduced from, or copied out of, its
 * staging slot. The first ones are posted at construction, before any neighbour can send.
 * At P = 2 a rank also knows how many its neighbour has posted (the count follows from the
 * operation both just ran) and sends no more before the neighbour has joined
 * ({@link #peerAhead}), so that there no message meets an RNR NAK whatever follows what; at
 * larger P one still can where a call's first step outgrows what the previous call left
 * posted.
 */
public final class RingAllReduce implements AutoCloseable {
    private static final int HEADER = CallHeader.LENGTH;
    /** The work request id of look-ahead receives (others carry their index in the operation). */
    private static final long LOOKAHEAD_WR_ID = -1;

    private final QueuePair toNext;
    private final QueuePair fromPrev;
    private final int rank;
    private final int size;
    private final int payloadBytes;
    private final int window;
    private final int slots;
    private final CompletionPump pump;
    private final MemoryRegion headers;
    private final ByteBuffer headerBytes;
    private final MemoryRegion staging;
    private final ByteBuffer stagingElements;
    private final CallHeader header = new CallHeader();
    private final SendRequest send = new SendRequest(2);
    private final RecvRequest recv = new RecvRequest(2);
    private final int[] sendBase;
    private final int[] recvBase;
    private final Supplier<String> context = this::describe;
    private final ReductionKernel kernel = ReductionKernel.create();
    /** Out of place: sums a message received into the output with the input, into the output. */
    private final ReductionKernel outputKernel = ReductionKernel.create();
    /** Out of place: reduce-scatter receives land in the output, not in staging. */
    private boolean receiveInOutput;

    private int sendSeq;
    private int recvSeq;
    private int elements;
    /** The call this operation runs for: its messages carry it, and a neighbour's must match it. */
    private CollectiveCall call;
    /** How received values are combined with this rank's: SUM and AVG add (AVG divides afterwards). */
    private ReduceOp combine = ReduceOp.SUM;
    private MemoryRegion inputRegion;
    private int inputOffset;
    private MemoryRegion outputRegion;
    private int outputOffset;
    private ByteBuffer outputElements;
    private int sent;
    private int sendsDone;
    private int posted;
    private int received;
    private int steps;
    /** 1 for a reduce-scatter, so that the chunk this rank completes last is its own; else 0. */
    private int chunkShift;
    /** Steps before this one reduce what they receive; from it on, received data is final. */
    private int reduceSteps;
    /** Look-ahead receives kept posted at least, for the operations to come. */
    private final int ahead;
    /** The most look-ahead receives kept posted for the next operation. */
    private final int aheadCap;
    /**
     * Staging slots for look-ahead receives, the most that are ever posted at once: the next
     * operation's and, while it runs, what this one still has to take of its own (room for
     * {@link #ahead} of those beside the most the next one keeps).
     */
    private final int aheadSlots;
    /**
     * Look-ahead receives kept posted for the next operation ({@link #lookAheadAfter}). A
     * neighbour that starts the next operation first sends its first step's messages as fast
     * as this rank acknowledges them, since they need nothing from it; each that finds no
     * receive is answered with an RNR NAK and sent again, with what followed it, after the RNR
     * timer (1.28 ms) while the ring waits (measured over tcp, 100 calls of 4 MiB at P = 4:
     * 111-117 RNR NAKs with 3 receives ahead, 36-45 with 4, 1-3 with 8).
     */
    private int aheadWanted;
    /**
     * At P = 2 (the next rank is the previous one): how many look-ahead receives the next rank
     * keeps posted for this operation, which this rank knows because that count follows from
     * the previous operation's shape, the same on both. Beyond them, a first-step message
     * waits until the next rank's first message of the operation has arrived, which it sends
     * only after posting its receives: no message of a P = 2 ring meets an RNR NAK, whatever
     * sizes and collectives follow each other.
     */
    private int peerAhead;
    /** Look-ahead receives posted and consumed so far. */
    private long aheadPosted;
    private long aheadConsumed;
    /** The staging slot of look-ahead receive j, at j mod {@link #aheadSlots}: receives complete in the order posted. */
    private final int[] aheadSlotOf;
    /**
     * Look-ahead slots no receive holds, the one freed last on top: a look-ahead receive takes
     * the slot whose data was summed last, still in cache, rather than the next of a rotation
     * through all of them (at P = 2, 8 MiB, 1 MiB messages, each call's reduce-scatter landed
     * in the next 4 of 10 slots: 10 MiB of staging in turn beside the tensor, where now the same
     * 4 serve every call). Against the rotation, P = 2, tcp, 2-8 MiB: 1.05-1.20x the busbw at
     * 0.87-0.96x the CPU per GB (docs/benchmarks.md, "The ring's messages").
     */
    private final int[] freeAhead;
    private int freeAheadCount;
    /** Of this operation's receives, how many (from receive 0) are look-ahead ones. */
    private int fromAhead;
    /** Look-ahead receives that completed before the operation they belong to began, in order. */
    private final WorkCompletion[] early;
    private int earlyCount;

    /**
     * {@code lookAhead}: how many receives to keep posted for operations to come, at least
     * as many messages as a neighbour can send of one operation before this rank joins it
     * (up to all its messages of the operation); one staging slot of {@code payloadBytes}
     * each.
     */
    public RingAllReduce(ProtectionDomain pd, QueuePair toNext, QueuePair fromPrev, CompletionQueue cq, int rank,
                         int size, int payloadBytes, int window, int lookAhead, Duration timeout) {
        this.toNext = toNext;
        this.fromPrev = fromPrev;
        this.rank = rank;
        this.size = size;
        this.payloadBytes = MessagePlan.checkPayloadBytes(payloadBytes);
        this.window = window;
        this.slots = 2 * window;
        this.pump = new CompletionPump(cq, 64, timeout);
        this.ahead = Math.max(1, lookAhead);
        this.aheadCap = aheadCap(ahead, window);
        this.aheadSlots = lookAheadSlots(lookAhead, window);
        this.aheadWanted = ahead;
        this.peerAhead = ahead;
        // Header and staging slots: the ring of `slots`, then `aheadSlots` for look-ahead receives.
        this.headers = pd.register(ByteBuffer.allocateDirect((window + slots + aheadSlots) * HEADER),
                EnumSet.of(Access.LOCAL_WRITE));
        this.headerBytes = headers.buffer();
        this.staging = pd.register(DirectBuffers.allocate((slots + aheadSlots) * payloadBytes),
                EnumSet.of(Access.LOCAL_WRITE));
        this.stagingElements = elementsAt(staging, 0);
        this.sendBase = new int[2 * size];
        this.recvBase = new int[2 * size];
        this.early = new WorkCompletion[aheadSlots];
        this.aheadSlotOf = new int[aheadSlots];
        this.freeAhead = new int[aheadSlots];
        for (int i = 0; i < aheadSlots; i++) {
            early[i] = new WorkCompletion();
            freeAhead[freeAheadCount++] = slots + aheadSlots - 1 - i;
        }
        topUpLookahead();
    }

    /**
     * Look-ahead receives posted at once at most, for {@code lookAhead} and {@code window} as
     * the constructor takes them: the receive queue needs room for these beside an
     * operation's own.
     */
    public static int lookAheadSlots(int lookAhead, int window) {
        int ahead = Math.max(1, lookAhead);
        return aheadCap(ahead, window) + ahead;
    }

    private static int aheadCap(int ahead, int window) {
        return Math.max(ahead, 2 * window);
    }

    /** Time spent waiting for completions so far, in nanoseconds. */
    public long waitNanos() {
        return pump.waitNanos();
    }

    /**
     * Sums {@code n} elements at byte {@code inOffset} of {@code input} across the ring into
     * byte {@code outOffset} of {@code output} (the same region and offset for in place),
     * combining with {@code call.combine()}.
     */
    public void run(CollectiveCall call, MemoryRegion input, int inOffset, MemoryRegion output, int outOffset,
                    int n) {
        combine = call.combine();
        bind(call, input, inOffset, output, outOffset, n);
        chunkShift = 0;
        exchange(size - 1, 2 * (size - 1));
    }

    /**
     * Reduce-scatter: the reduce-scatter half of the ring alone, with chunks numbered one
     * further back so that this rank completes chunk {@code rank} (elements
     * [rank·n/P, (rank+1)·n/P)) in {@code output}; other chunks of {@code output} hold partial
     * results. Chunk c is combined along the ring starting at rank c+1:
     * {@code ((x_{c+1} op x_{c+2}) op ...) op x_c}.
     */
    public void reduceScatter(CollectiveCall call, MemoryRegion input, int inOffset, MemoryRegion output,
                              int outOffset, int n) {
        combine = call.combine();
        bind(call, input, inOffset, output, outOffset, n);
        chunkShift = 1;
        exchange(size - 1, size - 1);
    }

    /**
     * All-gather: the {@code n} elements at byte {@code offset} of {@code region} are P equal
     * chunks, this rank's own already in place; only the all-gather half of the ring runs
     * (each chunk travels P-1 hops, half the traffic of an all-reduce of the same tensor).
     */
    public void gather(CollectiveCall call, MemoryRegion region, int offset, int n) {
        if (n % size != 0) {
            throw new IllegalArgumentException("all-gather of " + n + " elements over " + size + " ranks: not whole chunks");
        }
        bind(call, region, offset, region, offset, n);
        // Indexed as the reduce-scatter is (step s sends chunk r-s), so it starts from this rank's own chunk.
        chunkShift = 0;
        exchange(0, size - 1);
    }

    private void bind(CollectiveCall c, MemoryRegion input, int inOffset, MemoryRegion output, int outOffset, int n) {
        call = c;
        elements = n;
        inputRegion = input;
        inputOffset = inOffset;
        ByteBuffer inputElements = elementsAt(input, inOffset);
        outputRegion = output;
        outputOffset = outOffset;
        receiveInOutput = !(input == output && inOffset == outOffset);
        outputElements = receiveInOutput ? elementsAt(output, outOffset) : inputElements;
        kernel.bind(stagingElements, inputElements, outputElements);
        if (receiveInOutput) {
            outputKernel.bind(outputElements, inputElements, outputElements);
        }
    }

    /**
     * Runs {@code stepCount} ring steps, the first {@code reducing} of which add what arrives
     * (through staging) and the rest of which land it directly in the output. An empty
     * tensor runs one step of one header-only message, so that the calls are still compared.
     */
    private void exchange(int reducing, int stepCount) {
        reduceSteps = reducing;
        steps = stepCount;
        for (int s = 0; s < steps; s++) {
            sendBase[s + 1] = sendBase[s] + messages(sendChunk(s));
            recvBase[s + 1] = recvBase[s] + messages(recvChunk(s));
        }
        if (elements == 0) {
            reduceSteps = 0;
            steps = 1;
            sendBase[1] = 1;
            recvBase[1] = 1;
        }
        int totalSend = sendBase[steps];
        int totalRecv = recvBase[steps];
        aheadWanted = lookAheadAfter(recvBase);
        // The next rank receives what this rank sends: its receive counts are this rank's send counts.
        int nextRankAhead = peerAhead;
        peerAhead = lookAheadAfter(sendBase);
        // At P = 2 the next rank starts the next operation once it has this rank's last
        // message, and may then send peerAhead messages at once: they must find the receives
        // posted. An all-reduce posts them before its last send anyway (that send needs every
        // reduce-scatter message, whose look-ahead slots are then free, and the next
        // operation's receives follow this one's last); a lone reduce-scatter or all-gather
        // holds its last message back until they are, unless it is the first (which the next
        // rank may need before it sends the messages that free this rank's slots).
        boolean holdsLastSend = !(reduceSteps > 0 && steps > reduceSteps);
        // At P = 2 an all-reduce posts the next operation's receives once its own reduce-scatter
        // is summed, before the send that lets the next rank start that operation (see above):
        // they then take the slots this reduce-scatter just freed, still in cache.
        int topUpAfter = size == 2 && !holdsLastSend ? recvBase[reduceSteps] : 0;
        sent = 0;
        sendsDone = 0;
        received = 0;
        fromAhead = (int) Math.min(aheadPosted - aheadConsumed, totalRecv);
        posted = fromAhead;
        int sendStep = 0;
        int postStep = 0;
        int doneStep = 0;
        // Messages that arrived ahead, before this operation began.
        int takeEarly = Math.min(earlyCount, totalRecv);
        for (int e = 0; e < takeEarly; e++) {
            while (received >= recvBase[doneStep + 1]) {
                doneStep++;
            }
            arrived(early[e], doneStep, received - recvBase[doneStep]);
            received++;
        }
        shiftEarly(takeEarly);
        while (received < totalRecv || sendsDone < totalSend) {
            while (posted < totalRecv && posted < received + slots) {
                while (posted >= recvBase[postStep + 1]) {
                    postStep++;
                }
                postRecv(postStep, posted - recvBase[postStep]);
                posted++;
            }
            if (posted == totalRecv && received >= topUpAfter) {
                topUpLookahead();
            }
            while (sent < totalSend && sent < sendsDone + window) {
                while (sent >= sendBase[sendStep + 1]) {
                    sendStep++;
                }
                int k = sent - sendBase[sendStep];
                if (sendStep > 0 && recvBase[sendStep - 1] + k >= received) {
                    break; // its data has not arrived from the previous rank yet
                }
                if (size == 2 && sendStep == 0 && k >= nextRankAhead && received == 0) {
                    break; // the next rank may not have posted a receive for it yet
                }
                if (size == 2 && holdsLastSend && sent == totalSend - 1 && sent > 0
                        && nextOperationsAhead() < aheadWanted) {
                    break; // see holdsLastSend
                }
                postSend(sendStep, k);
                sent++;
            }
            int count = pump.await(call.guard(), context);
            for (int i = 0; i < count; i++) {
                WorkCompletion wc = pump.completion(i);
                if (wc.opcode() == WcOpcode.RECV && received == totalRecv) {
                    // A neighbour already started the next operation: its message filled a
                    // look-ahead receive. It belongs to that operation.
                    early[earlyCount++].copyFrom(wc);
                } else if (wc.opcode() == WcOpcode.RECV) {
                    while (received >= recvBase[doneStep + 1]) {
                        doneStep++;
                    }
                    arrived(wc, doneStep, received - recvBase[doneStep]);
                    received++;
                } else {
                    sendsDone++;
                }
            }
        }
        topUpLookahead();
        sendSeq += totalSend;
        recvSeq += totalRecv;
    }

    /**
     * Look-ahead receives to keep posted after an operation whose per-step message counts
     * (cumulative) are {@code base}: {@link #ahead}, or after an operation whose first step
     * reduces, as many of that step's messages as {@link #aheadCap} allows; but after an
     * all-reduce no more than its reduce-scatter's messages. Its all-gather messages need this
     * rank's reduce-scatter ones first, so a neighbour cannot send them before this rank
     * joins, and one that landed in look-ahead staging would be copied out again (at P = 2
     * with one message a step, the all-gather's half of the tensor). Always at least one, so
     * that at P = 2 each rank may send its first message before the other joins.
     */
    private int lookAheadAfter(int[] base) {
        if (reduceSteps == 0) {
            return ahead;
        }
        int floor = steps > reduceSteps ? Math.max(1, Math.min(ahead, base[reduceSteps])) : ahead;
        return Math.max(floor, Math.min(aheadCap, base[1]));
    }

    /** Drops the first {@code n} early completions, which this operation has used. */
    private void shiftEarly(int n) {
        if (n == 0) {
            return;
        }
        for (int i = n; i < earlyCount; i++) {
            early[i - n].copyFrom(early[i]);
        }
        earlyCount -= n;
    }

    /**
     * A view whose float32 element i is at byte 4i, from {@code byteOffset} of the region
     * (which need not be 4-aligned).
     */
    static ByteBuffer elementsAt(MemoryRegion region, int byteOffset) {
        ByteBuffer b = region.buffer().duplicate();
        b.clear().position(byteOffset);
        return b.slice().order(InaHeader.PAYLOAD_ORDER);
    }

    /** Look-ahead receives posted for the next operation: those this one does not take. */
    private long nextOperationsAhead() {
        return aheadPosted - aheadConsumed - Math.max(0, fromAhead - received);
    }

    /**
     * Posts look-ahead receives until {@link #aheadWanted} wait for the next operation, beyond
     * those this one takes. Called once all of this operation's receives are posted (they must
     * come first: receives complete in order), which for an operation of up to {@link #slots}
     * receives is before its first send, so before a neighbour can finish it and start the next;
     * a P = 2 all-reduce waits until its reduce-scatter is summed, still before its last send.
     */
    private void topUpLookahead() {
        while (nextOperationsAhead() < aheadWanted && aheadPosted - aheadConsumed < aheadSlots) {
            int slot = freeAhead[--freeAheadCount];
            aheadSlotOf[(int) (aheadPosted % aheadSlots)] = slot;
            recv.reset().wrId(LOOKAHEAD_WR_ID);
            recv.sgl().add(headers, (window + slot) * HEADER, HEADER).add(staging, slot * payloadBytes, payloadBytes);
            try {
                fromPrev.postRecv(recv);
            } catch (VerbsException e) {
                throw new HostException("posting a look-ahead ring receive failed: " + e.getMessage(), e);
            }
            aheadPosted++;
        }
    }

    private int sendChunk(int step) {
        return Math.floorMod(rank - step - chunkShift, size);
    }

    private int recvChunk(int step) {
        return Math.floorMod(rank - step - 1 - chunkShift, size);
    }

    private int chunkStart(int c) {
        return (int) ((long) c * elements / size);
    }

    private int messages(int chunk) {
        return MessagePlan.messageCount(chunkStart(chunk + 1) - chunkStart(chunk), payloadBytes);
    }

    /** Element offset and count of message k of chunk c, packed as offset << 32 | count. */
    private long slice(int chunk, int k) {
        int start = chunkStart(chunk) + k * (payloadBytes / 4);
        int count = Math.min(payloadBytes / 4, chunkStart(chunk + 1) - start);
        return ((long) start << 32) | count;
    }

    private void postSend(int step, int k) {
        long sl = slice(sendChunk(step), k);
        int bytes = (int) sl * 4;
        int slot = (sent % window) * HEADER;
        header.wrap(headerBytes, slot).set(call, rank, sendSeq + sent, bytes);
        send.reset().wrId(sent);
        // Step 0 sends this rank's own input; later steps forward what the previous step wrote.
        send.sgl().add(headers, slot, HEADER);
        if (bytes == 0) {
            // the header alone: an empty tensor's call, compared all the same
        } else if (step == 0) {
            send.sgl().add(inputRegion, inputOffset + (int) (sl >>> 32) * 4, bytes);
        } else {
            send.sgl().add(outputRegion, outputOffset + (int) (sl >>> 32) * 4, bytes);
        }
        try {
            toNext.postSend(send);
        } catch (VerbsException e) {
            throw new HostException("posting ring message " + sent + " failed: " + e.getMessage() + "; " + describe(), e);
        }
    }

    private void postRecv(int step, int k) {
        long sl = slice(recvChunk(step), k);
        int bytes = (int) sl * 4;
        int slot = posted % slots;
        recv.reset().wrId(posted);
        recv.sgl().add(headers, (window + slot) * HEADER, HEADER);
        if (bytes == 0) {
            // a header-only message
        } else if (step < reduceSteps && !receiveInOutput) {
            recv.sgl().add(staging, slot * payloadBytes, bytes);
        } else {
            recv.sgl().add(outputRegion, outputOffset + (int) (sl >>> 32) * 4, bytes);
        }
        try {
            fromPrev.postRecv(recv);
        } catch (VerbsException e) {
            throw new HostException("posting ring receive " + posted + " failed: " + e.getMessage() + "; "
                    + describe(), e);
        }
    }

    private void arrived(WorkCompletion wc, int step, int k) {
        long sl = slice(recvChunk(step), k);
        int count = (int) sl;
        boolean lookedAhead = received < fromAhead;
        int slot = lookedAhead ? aheadSlotOf[(int) (aheadConsumed % aheadSlots)] : received % slots;
        header.wrap(headerBytes, (window + slot) * HEADER);
        int prev = Math.floorMod(rank - 1, size);
        if (!call.matches(header) || header.version() != CallHeader.VERSION) {
            throw new CallMismatchException("rank " + rank + ": rank " + prev + " sent a message of "
                    + header.describeCall() + " where this rank runs collective " + call);
        }
        if (wc.wrId() != (lookedAhead ? LOOKAHEAD_WR_ID : received) || header.rank() != prev
                || header.msgId() != recvSeq + received || header.payloadLength() != count * 4
                || wc.byteLength() != HEADER + count * 4) {
            throw new ResultMismatchException("rank " + rank + ": ring message " + received + " arrived as "
                    + wc.byteLength() + " bytes with header " + header + "; expected msg " + (recvSeq + received)
                    + " of " + count * 4 + " bytes from rank " + prev);
        }
        int at = (int) (sl >>> 32);
        int from = slot * (payloadBytes / 4);
        if (step < reduceSteps && receiveInOutput && !lookedAhead) {
            outputKernel.apply(combine, at, at, at, count); // received (in the output) op local
        } else if (step < reduceSteps) {
            kernel.apply(combine, from, at, at, count); // received op local, as the summation order documents
        } else if (lookedAhead) {
            // A look-ahead receive put the message in staging rather than the output.
            outputElements.put(4 * at, stagingElements, 4 * from, 4 * count);
        }
        if (lookedAhead) {
            aheadConsumed++;
            freeAhead[freeAheadCount++] = slot;
        }
    }

    private String describe() {
        return "rank " + rank + " of " + size + " (ring, " + call + ", " + elements + " elements) waiting for message "
                + received + " from rank " + Math.floorMod(rank - 1, size) + " (sent " + sent + ", acknowledged "
                + sendsDone + ")";
    }

    @Override
    public void close() {
        headers.close();
        staging.close();
    }
}
