package io.netreduce.collectives.algorithm.netreduce;

import io.netreduce.collectives.algorithm.CallMismatchException;
import io.netreduce.collectives.algorithm.CompletionPump;
import io.netreduce.collectives.algorithm.HostException;
import io.netreduce.collectives.algorithm.MessagePlan;
import io.netreduce.collectives.algorithm.ProgressGuard;
import io.netreduce.collectives.algorithm.ResultMismatchException;

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
import java.nio.ByteBuffer;
import java.util.EnumSet;
import java.util.function.Supplier;

/**
 * One rank's side of a NetReduce all-reduce (the paper's host flow control): messages go
 * out on {@code sendQp} (connected to the next rank, through the switch) as gather lists
 * {@code [INA header, tensor slice]}; results come back on {@code recvQp} (connected to
 * the previous rank) into scatter lists {@code [header scratch, output slice]}, so tensor
 * bytes are never copied here. At most N messages are in flight: message i+N is posted
 * when result i has arrived, which is also what lets the switch recycle its aggregators.
 * The operation completes when every result has arrived and every send has completed.
 *
 * <p>Every message carries the caller's call digest; a switch that finds the ranks' digests
 * differ sends mismatch notices instead of sums, and this side fails the call with a
 * {@link CallMismatchException}.
 *
 * <p>Not thread-safe: one operation at a time. Reusable across operations, and allocates
 * nothing per message.
 */
public final class WindowedAllReduce implements AutoCloseable {
    private static final int HEADER = InaHeader.LENGTH;

    private final QueuePair sendQp;
    private final QueuePair recvQp;
    private final RingSettings settings;
    private final CompletionPump pump;
    /** 2N send header slots (a send may still be unacknowledged when its result is in), then N receive slots. */
    private final MemoryRegion headers;
    private final ByteBuffer headerBytes;
    private final int sendSlots;
    private final InaHeader header = new InaHeader();
    private final SendRequest send = new SendRequest(2);
    private final RecvRequest recv = new RecvRequest(2);
    private final Supplier<String> context = this::describe;

    private MessagePlan plan;
    /**
     * Message ids run on across operations (wrapping at 2^32): the switch keys its slots
     * by msgId mod 2N and frees slot m-2N on seeing message m, so restarting at 0 would make
     * it replay a stored result as if ours were a retransmission.
     */
    private int msgBase;
    private int nextRecv;
    private int nextSend;
    private int results;
    private int sendsDone;
    /** The running operation's call digest, in every message's INA header. */
    private int call;

    /** {@code cq} must be the completion queue of both queue pairs (sends and receives). */
    public WindowedAllReduce(ProtectionDomain pd, QueuePair sendQp, QueuePair recvQp, CompletionQueue cq,
                             RingSettings settings) {
        this.sendQp = sendQp;
        this.recvQp = recvQp;
        this.settings = settings;
        this.sendSlots = 2 * settings.window();
        this.pump = new CompletionPump(cq, 64, settings.timeout());
        this.headers = pd.register(ByteBuffer.allocateDirect((sendSlots + settings.window()) * HEADER),
                EnumSet.of(Access.LOCAL_WRITE));
        this.headerBytes = headers.buffer();
    }

    public RingSettings settings() {
        return settings;
    }

    /** Time spent waiting for completions so far, in nanoseconds. */
    public long waitNanos() {
        return pump.waitNanos();
    }

    /**
     * Reduces {@code elements} elements at byte {@code inOffset} of {@code input} into byte
     * {@code outOffset} of {@code output} (the same region and offset for in place). Every
     * message carries {@code call}, the digest of the caller's call, which the switch
     * compares across ranks.
     */
    public void run(MemoryRegion input, int inOffset, MemoryRegion output, int outOffset, int elements, int call,
                    MessageHooks hooks, ProgressGuard guard) {
        plan = new MessagePlan(elements, settings.payloadBytes());
        this.call = call;
        nextRecv = 0;
        nextSend = 0;
        results = 0;
        sendsDone = 0;
        int total = plan.messageCount();
        int window = settings.window();
        while (results < total || sendsDone < total) {
            // Receives first, so a result can never find no buffer; then sends, bounded by the
            // window (results) and by the free header slots (completed sends).
            while (nextRecv < total && nextRecv < results + window) {
                postRecv(output, outOffset, nextRecv++);
            }
            while (nextSend < nextRecv && nextSend < sendsDone + sendSlots) {
                hooks.beforeSend(plan.elementOffset(nextSend), plan.elementCount(nextSend));
                postSend(input, inOffset, nextSend++);
            }
            int n = pump.await(guard, context);
            for (int i = 0; i < n; i++) {
                WorkCompletion wc = pump.completion(i);
                if (wc.opcode() == WcOpcode.RECV) {
                    int msg = (int) wc.wrId();
                    verify(msg, wc);
                    results++;
                    hooks.afterResult(plan.elementOffset(msg), plan.elementCount(msg));
                } else {
                    sendsDone++;
                }
            }
        }
        msgBase += total;
    }

    /** The id the next operation's first message will carry (equal on every rank of a healthy ring). */
    public int nextMessageId() {
        return msgBase;
    }

    private void postSend(MemoryRegion input, int inOffset, int msg) {
        int slot = (msg % sendSlots) * HEADER;
        int length = plan.payloadLength(msg);
        header.wrap(headerBytes, slot).set(settings.dtype(), settings.rank(), settings.ringId(), msgBase + msg,
                length, call);
        send.reset().wrId(msg);
        send.sgl().add(headers, slot, HEADER);
        if (length > 0) {
            send.sgl().add(input, inOffset + plan.elementOffset(msg) * MessagePlan.ELEMENT_BYTES, length);
        }
        try {
            sendQp.postSend(send);
        } catch (VerbsException e) {
            throw new HostException("posting message " + msg + " failed: " + e.getMessage() + "; " + describe(), e);
        }
    }

    private void postRecv(MemoryRegion output, int outOffset, int msg) {
        int slot = (sendSlots + msg % settings.window()) * HEADER;
        recv.reset().wrId(msg);
        recv.sgl().add(headers, slot, HEADER);
        int length = plan.payloadLength(msg);
        if (length > 0) {
            recv.sgl().add(output, outOffset + plan.elementOffset(msg) * MessagePlan.ELEMENT_BYTES, length);
        }
        try {
            recvQp.postRecv(recv);
        } catch (VerbsException e) {
            throw new HostException("posting the receive of result " + msg + " failed: " + e.getMessage() + "; "
                    + describe(), e);
        }
    }

    /**
     * Results arrive in order on an RC connection; each must be the switch's complete
     * aggregate of this ring's message: marked as a result of every rank's contribution, with
     * the ring, message id and length we sent. Anything else (a predecessor's own tensor that
     * went around the switch, a partial sum, another ring's message) fails the collective
     * instead of becoming a silently wrong sum.
     */
    private void verify(int msg, WorkCompletion wc) {
        int expectedLength = plan.payloadLength(msg);
        header.wrap(headerBytes, (sendSlots + msg % settings.window()) * HEADER);
        if (header.isCallMismatch() && header.version() == InaHeader.VERSION) {
            throw new CallMismatchException(where() + ": the switch found that the ranks called different collectives "
                    + "for message " + header.msgId() + " (its ranks' call digests differ)");
        }
        if (msg != results || wc.byteLength() != HEADER + expectedLength
                || header.version() != InaHeader.VERSION || header.dtype() != settings.dtype()
                || header.ringId() != settings.ringId() || header.msgId() != msgBase + msg
                || header.payloadLength() != expectedLength) {
            throw new ResultMismatchException(where() + " arrived as " + wc.byteLength() + " bytes with header " + header
                    + " but message " + msg + " was sent as ring " + Integer.toUnsignedString(settings.ringId())
                    + ", msg " + (msgBase + msg) + ", len " + expectedLength + ", dtype " + settings.dtype()
                    + " (does another rank reduce a tensor of a different length?)");
        }
        if (!header.isResult()) {
            throw new ResultMismatchException(where() + " did not come from the NetReduce switch: it carries rank "
                    + header.rank() + "'s own header, unmarked, so its packets went around the switch (every device "
                    + "must reach its successor through the switch: check the gateway, or the fabric's path)");
        }
        if (header.contributions() != settings.ranks()) {
            throw new ResultMismatchException(where() + " is a sum of " + header.contributions() + " ranks' tensors but "
                    + "the ring has " + settings.ranks() + " ranks (the switch holds this ring with another size?)");
        }
    }

    /** Which result failed, for the messages of {@link #verify} (built only when one fails). */
    private String where() {
        return "rank " + settings.rank() + ", ring " + Integer.toUnsignedString(settings.ringId()) + ": result "
                + results + " of " + plan.messageCount();
    }

    /** What the operation is waiting for, for timeout and error messages. */
    private String describe() {
        return "rank " + settings.rank() + ", ring " + settings.ringId() + " waiting for result " + results
                + " of " + (plan == null ? 0 : plan.messageCount()) + " (window " + settings.window()
                + ", sends posted " + nextSend + ", completed " + sendsDone + ")";
    }

    @Override
    public void close() {
        headers.close();
    }
}
