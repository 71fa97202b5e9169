package io.netreduce.verbs.tcp;

import io.netreduce.verbs.Counter;
import io.netreduce.verbs.QpState;
import io.netreduce.verbs.WcStatus;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The outgoing side of a {@link TcpQueuePair}'s connection: a resumable state machine over
 * the frame being written (which frame, how far), so that a blocking writer thread, a
 * poster writing its own small request, and a poller with a non-blocking socket all drive
 * the same code. Frames go out as gathering writes of {@code [header, SGE views...]}
 * straight from the registered buffers: no payload copy.
 *
 * <p>What comes next: a pending ACK, then a pending NAK (the reader asks for them), then the
 * next request of the send queue. A SEND the responder's receive credit covers
 * ({@link FrameHeader}) goes out asking for no ACK and completes here, once written. An ACK
 * with a request ready behind it leaves in the same gathering write as the request (one
 * system call, as a reply that carries its ACK). One
 * thread at a time owns the socket ({@link #socketBusy}, guarded by the queue pair's lock);
 * the frame state below is that thread's.
 */
final class TcpFrameWriter {
    private static final Logger LOG = LoggerFactory.getLogger(TcpFrameWriter.class);
    /** At most this many bytes per socket write, so the ACK timer sees a large message progress. */
    static final int WRITE_CHUNK_BYTES = 1 << 20;

    private final TcpQueuePair qp;

    /** A thread (the writer, a poster writing inline, or a poller) is writing; guarded by the QP lock. */
    private boolean socketBusy;

    // Control frames the reader wants sent; guarded by the QP lock.
    private boolean ackPending;
    private int ackSequence;
    private boolean nakPending;
    private byte nakStatus;
    private int nakSequence;
    private int nakAux;

    // The frame being written, owned by the thread that claimed the socket.
    private final ByteBuffer control = ByteBuffer.allocateDirect(FrameHeader.LENGTH);
    private final FrameHeader controlHeader = new FrameHeader().wrap(control);
    private boolean writingControl;
    /** The control frame goes in front of the request frame being written, in the same writes. */
    private boolean controlAhead;
    /** [control, the request's vector...] for {@link #controlAhead}; grown once to the widest vector. */
    private ByteBuffer[] gather = new ByteBuffer[0];
    private TcpSendSlot writingSlot;
    private long writingIndex;
    private int writingVectorLength;
    private long writingTotal;
    private long writingWritten;
    /** Written by the socket's owner, read by the ACK timer. */
    private volatile long bytesWritten;
    /** The last write took less than it was given: the socket's buffer is full. */
    private boolean lastWriteShort;
    /**
     * A non-blocking write found the socket's buffer full: writers in polled progress wait
     * for {@code select} to report room ({@link #roomAgain}), which the kernel reports once a
     * third of the buffer is free, as a blocking write sleeps until then, instead of a
     * spinning poller writing again as soon as any segment drains (measured: the ring at
     * 64 MiB over tcp, P = 2, 1.13x the busbw at 0.88x the CPU per byte). Racy by design: a
     * stale read costs one write that takes nothing, or one wake-up later.
     */
    private volatile boolean awaitingRoom;

    TcpFrameWriter(TcpQueuePair qp) {
        this.qp = qp;
    }

    long bytesWritten() {
        return bytesWritten;
    }

    /** Asks for an ACK of requests up to {@code sequence} (ACKs coalesce). Caller holds the QP lock. */
    void requestAckLocked(int sequence) {
        ackPending = true;
        ackSequence = sequence;
    }

    /** Whether a NAK waits to be written. Caller holds the QP lock. */
    boolean nakPendingLocked() {
        return nakPending;
    }

    /** Whether an ACK waits to be written. Caller holds the QP lock. */
    boolean ackPendingLocked() {
        return ackPending;
    }

    /** Asks for a NAK. Caller holds the QP lock. */
    void requestNakLocked(byte status, int sequence, int aux) {
        nakPending = true;
        nakStatus = status;
        nakSequence = sequence;
        nakAux = aux;
    }

    /** Caller holds the QP lock. */
    boolean controlPendingLocked() {
        return ackPending || nakPending;
    }

    boolean socketBusyLocked() {
        return socketBusy;
    }

    /** A poster claims the free socket for the request at {@code index}. Caller holds the QP lock. */
    void claimForRequestLocked(long index) {
        socketBusy = true;
        beginRequestFrame(index);
    }

    /**
     * Picks the next frame to write: a pending ACK, then a pending NAK, then the next request
     * (unless in RNR backoff, or the queue pair is not READY). Caller holds the lock and has
     * claimed the socket ({@link #socketBusy}); no frame may be in progress.
     */
    private boolean claimFrameLocked() {
        if (ackPending) {
            ackPending = false;
            qp.creditLocked(controlHeader.set(FrameHeader.TYPE_ACK, (byte) 0, ackSequence, 0, 0, 0, 0, 0));
            qp.counters().increment(Counter.ACKS_SENT);
            long next = nakPending ? -1 : qp.nextToTransmitLocked();
            beginControlFrame();
            if (next >= 0) {
                writingControl = false;
                beginRequestFrame(next);
                controlAhead = true;
                writingTotal += FrameHeader.LENGTH;
            }
            return true;
        }
        if (nakPending) {
            nakPending = false;
            controlHeader.set(FrameHeader.TYPE_NAK, nakStatus, nakSequence, 0, 0, 0, 0, nakAux);
            if (nakStatus == FrameHeader.STATUS_RNR) {
                qp.counters().increment(Counter.RNR_NAKS_SENT);
                qp.rnrNakWrittenLocked();
            }
            beginControlFrame();
            return true;
        }
        long next = qp.nextToTransmitLocked();
        if (next >= 0) {
            beginRequestFrame(next);
            return true;
        }
        return false;
    }

    private void beginControlFrame() {
        writingControl = true;
        writingTotal = FrameHeader.LENGTH;
        writingWritten = 0;
        // Counted before the write: the peer's answer may arrive before write() returns.
        qp.counters().increment(Counter.PACKETS_SENT);
        qp.counters().add(Counter.BYTES_SENT, FrameHeader.LENGTH);
    }

    private void beginRequestFrame(long index) {
        TcpSendSlot slot = qp.sendSlot(index);
        writingVectorLength = slot.prepare((int) index, qp.underCreditLocked(slot));
        if (slot.isSend()) {
            // The reverse direction's credit rides along: a queue pair that sends both ways
            // (a partner exchange) then needs no ACK to learn of its peer's new receives.
            qp.creditLocked(slot.header);
        }
        writingSlot = slot;
        writingIndex = index;
        writingTotal = FrameHeader.LENGTH + (long) slot.length;
        writingWritten = 0;
        // Counted before the write: the peer's ACK (and so the completion a user polls) may
        // arrive before the writing thread returns from write().
        qp.counters().increment(Counter.PACKETS_SENT);
        qp.counters().add(Counter.BYTES_SENT, writingTotal);
    }

    boolean frameInProgress() {
        return writingControl || writingSlot != null;
    }

    /**
     * One write call on the frame in progress; the frame is done when
     * {@link #frameInProgress()} turns false. A request goes as gathering writes of at most
     * {@link #WRITE_CHUNK_BYTES} (the last up to twice that): a blocking write returns only
     * when all it was given sits in the socket buffer, so one call per 64 MiB message would
     * hide from the ACK timer that a slow peer is reading. The tail goes with the last
     * chunk: a separate write of a few bytes would cost a system call and a segment. Each
     * iov buffer's position records what was written, so a non-blocking write that stops
     * part-way resumes where it stopped. Only by the thread that claimed the socket.
     */
    private long writeOnce(SocketChannel ch) throws IOException {
        long w;
        long offered;
        if (writingControl) {
            offered = control.remaining();
            w = ch.write(control);
        } else {
            TcpSendSlot slot = writingSlot;
            ByteBuffer[] iov = slot.iov;
            int n = writingVectorLength;
            int budget = writingTotal - writingWritten <= 2L * WRITE_CHUNK_BYTES ? Integer.MAX_VALUE : WRITE_CHUNK_BYTES;
            offered = 0;
            for (int i = 0; i < n; i++) {
                ByteBuffer b = iov[i];
                int take = Math.min(slot.ends[i] - b.position(), budget);
                b.limit(b.position() + take);
                budget -= take;
                offered += take;
            }
            if (controlAhead && control.hasRemaining()) {
                offered += control.remaining();
                if (gather.length < n + 1) {
                    gather = new ByteBuffer[n + 1];
                }
                gather[0] = control;
                System.arraycopy(iov, 0, gather, 1, n);
                w = ch.write(gather, 0, n + 1);
            } else {
                w = ch.write(iov, 0, n);
            }
        }
        lastWriteShort = w < offered;
        writingWritten += w;
        bytesWritten += w; // one socket writer at a time (socketBusy)
        if (writingWritten == writingTotal) {
            TcpSendSlot done = writingSlot;
            writingControl = false;
            controlAhead = false;
            writingSlot = null;
            if (done != null && done.completesOnWrite) {
                qp.writtenUnderCredit(writingIndex);
            }
        }
        return w;
    }

    /** Drops the frame a failed write left behind, so no later writer resumes it. */
    private void abandonFrame() {
        writingControl = false;
        controlAhead = false;
        writingSlot = null;
    }

    /** Writes the request frame a poster claimed, on the posting thread, then frees the socket. */
    void writeInline(SocketChannel ch) {
        try {
            while (frameInProgress()) {
                writeOnce(ch);
            }
        } catch (IOException e) {
            abandonFrame();
            qp.connectionLost("write", e);
        } finally {
            releaseSocket();
        }
    }

    /** Frees the socket for the next writer; wakes the writer thread if work queued up meanwhile. */
    private void releaseSocket() {
        qp.lock.lock();
        try {
            socketBusy = false;
            if (ackPending || nakPending || qp.hasUntransmittedLocked() || qp.state() != QpState.READY) {
                qp.changed.signalAll();
            }
        } finally {
            qp.lock.unlock();
        }
    }

    /** Threaded progress: the writer thread's loop, blocking in write() while the socket is full. */
    void writeLoop(SocketChannel ch) {
        // Whether this thread claimed the socket for its last frame: released at the next
        // locked section rather than with a lock of its own after every write.
        boolean holding = false;
        try {
            while (true) {
                qp.lock.lock();
                try {
                    if (holding) {
                        socketBusy = false;
                        holding = false;
                    }
                    while (true) {
                        if (qp.state() == QpState.CLOSED) {
                            return;
                        }
                        if (socketBusy) {
                            qp.changed.await(); // a poster is writing inline; it signals when done
                            continue;
                        }
                        if (claimFrameLocked()) {
                            break;
                        }
                        long backoffEnds = qp.rnrBackoffEndsLocked();
                        if (backoffEnds != Long.MAX_VALUE) {
                            qp.changed.awaitNanos(backoffEnds - System.nanoTime());
                        } else {
                            qp.changed.await();
                        }
                    }
                    // A write that fails leaves the socket claimed: the queue pair is in ERROR
                    // by then, and nothing is written inline in ERROR.
                    socketBusy = true;
                    holding = true;
                } finally {
                    qp.lock.unlock();
                }
                while (frameInProgress()) {
                    writeOnce(ch);
                }
            }
        } catch (IOException e) {
            abandonFrame();
            qp.connectionLost("write", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            LOG.error("QP {}: writer failed", qp.qpn(), e);
            qp.fail(WcStatus.GENERAL_ERR, "internal error in the writer: " + e);
        }
    }

    /**
     * Polled progress: writes frames until the socket takes no more or nothing is left,
     * without blocking. Sends ACKs and NAKs in ERROR too, so the peer learns why. False if
     * another thread holds the socket or nothing moved.
     */
    boolean writeStep(SocketChannel ch) {
        boolean moved = false;
        while (true) {
            qp.lock.lock();
            try {
                if (socketBusy || qp.state() == QpState.CLOSED || (!frameInProgress() && !claimFrameLocked())) {
                    return moved;
                }
                socketBusy = true;
            } finally {
                qp.lock.unlock();
            }
            awaitingRoom = false;
            boolean stop = false;
            try {
                while (true) {
                    long w = writeOnce(ch);
                    moved |= w > 0;
                    if (frameInProgress()) {
                        if (lastWriteShort) {
                            awaitingRoom = true; // socket buffer full: the poller waits for OP_WRITE
                            stop = true;
                            break;
                        }
                        continue;
                    }
                    qp.lock.lock();
                    try {
                        if (!claimFrameLocked()) {
                            break;
                        }
                    } finally {
                        qp.lock.unlock();
                    }
                }
            } catch (IOException e) {
                stop = true;
                abandonFrame();
                qp.connectionLost("write", e);
            } finally {
                qp.lock.lock();
                try {
                    socketBusy = false;
                } finally {
                    qp.lock.unlock();
                }
            }
            if (stop) {
                return moved;
            }
            // A post that found the socket claimed left its request to us: look once more.
        }
    }

    /** Whether a write found the socket's buffer full and no poller has seen room since. */
    boolean awaitingRoom() {
        return awaitingRoom;
    }

    /** {@code select} reported room in the socket's buffer. */
    void roomAgain() {
        awaitingRoom = false;
    }

    /**
     * Whether the only thing waiting is an ACK (no frame under way, no NAK, no request): a
     * poller may leave it for its next step, when a reply may carry it (racy, as
     * {@link #wantsWrite}: at worst the ACK waits one step or goes alone).
     */
    boolean onlyAckWaits() {
        return ackPending && !nakPending && !frameInProgress() && !qp.hasUntransmitted();
    }

    /** Whether a write step could move anything now, for the poller (racy, as {@link #wantsWrite}). */
    boolean hasWork() {
        return frameInProgress() || ackPending || nakPending || qp.hasUntransmitted();
    }

    /**
     * Whether anything waits to be written. Read without the lock: a stale answer costs one
     * spurious or one late (by the poller's longest wait) wake-up, never a lost frame.
     */
    boolean wantsWrite() {
        return frameInProgress() || ackPending || nakPending || qp.mayTransmit();
    }
}
