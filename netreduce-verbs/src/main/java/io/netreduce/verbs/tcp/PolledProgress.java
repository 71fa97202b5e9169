package io.netreduce.verbs.tcp;

import io.netreduce.verbs.Counter;
import io.netreduce.verbs.QpState;
import io.netreduce.verbs.support.AckHold;
import io.netreduce.verbs.support.FallbackProgress;
import java.nio.channels.SocketChannel;

/**
 * {@link TcpProgress#POLL}: no threads of its own. A poller of the queue pair's completion
 * queues drives the non-blocking socket ({@link #progress()}), a post writes what the socket
 * takes at once, and the device drives a queue pair nobody polls, as an RC NIC keeps
 * answering while its application computes. The data is copied by the thread that consumes
 * it, with no hand-over between threads.
 *
 * <p>On a queue pair that sends too (requests both ways, as a ping-pong), a poll whose read
 * completed a receive holds the ACK it owes back for up to {@link AckHold#NANOS}: the
 * poller gets its completion a system call sooner, and if it answers on this queue pair the
 * ACK leaves in the same write as the reply. A later poll writes it once it is that old
 * (or once anything else is to be written), the device's fallback at once. A queue pair
 * that only receives (a ring's link from its left neighbour) ACKs at once: nothing of its
 * own would carry the ACK, and its sender may be waiting to finish.
 */
final class PolledProgress implements TcpProgressDriver {
    /** Drives per idle spell while nobody polls: as often as the device looked before it timed itself. */
    private static final int IDLE_DRIVES = 5;
    private final TcpQueuePair qp;
    private final TcpCompletionQueue sendCq;
    private final TcpCompletionQueue recvCq;
    private volatile SocketChannel channel;
    private volatile long lastPolledNanos;
    /** The fallback's current wait between looks while nothing moves, and the poll it counts from (fallback thread only). */
    private long idleLookNanos;
    private long idleSince;
    /**
     * The longest wait between the fallback's looks at this queue pair, whether it has nothing
     * to do or its application keeps polling: {@link FallbackProgress#LONGEST_LOOK_NANOS}, or a
     * quarter of its ACK timeout if that is shorter (a request a peer sends meanwhile is still
     * answered well within the peer's timer). Each look at an idle queue pair that finds nothing
     * moving doubles the wait up to this. Without that, an idle queue pair (a ring's partner
     * queue pairs while tensors are large, any queue pair between calls) woke the device's
     * timer thread every {@code idleNanos / IDLE_DRIVES}: at P = 4 on two cores, 430 wake-ups
     * a second per rank against 120 with it, each taking a core from a rank (docs/benchmarks.md).
     */
    private final long idleLookMaxNanos;
    /** A step held the ACK back (since {@link #ackHeldSince}); racy between pollers: at worst held shorter. */
    private boolean ackHeld;
    private long ackHeldSince;

    PolledProgress(TcpQueuePair qp, TcpCompletionQueue sendCq, TcpCompletionQueue recvCq) {
        this.qp = qp;
        this.sendCq = sendCq;
        this.recvCq = recvCq;
        this.idleLookMaxNanos = Math.min(FallbackProgress.LONGEST_LOOK_NANOS, qp.ackTimeout().toNanos() / 4);
    }

    @Override
    public boolean blockingSocket() {
        return false;
    }

    @Override
    public void startLocked(SocketChannel ch) {
        channel = ch;
        lastPolledNanos = System.nanoTime();
        sendCq.attach(qp, ch);
        if (recvCq != sendCq) {
            recvCq.attach(qp, ch);
        }
        qp.device().drive(qp);
    }

    @Override
    public boolean sendQueuedLocked(long index, long length) {
        return false; // written right after, outside the lock
    }

    @Override
    public void afterSendQueued(boolean claimed) {
        TcpFrameWriter w = qp.writer();
        if (w.awaitingRoom()) {
            return; // the poller writes once select() reports room
        }
        if (w.writeStep(channel) && w.frameInProgress()) {
            // The socket filled part-way: a poller blocked in select() does not yet wait for
            // it to drain. (Racy read of the frame state: at worst a spurious wake-up.)
            sendCq.wakeUp();
        }
    }

    @Override
    public void afterControlQueued() {
        // A poller blocked in select() waits for bytes to read, not for this frame.
        afterSendQueued(false);
    }

    @Override
    public boolean progress() {
        if (qp.state() == QpState.CLOSED) {
            return false;
        }
        lastPolledNanos = System.nanoTime();
        return drive(true);
    }

    @Override
    public long driveIfIdle(long now, long idleNanos) {
        if (qp.state() == QpState.CLOSED) {
            return Long.MAX_VALUE;
        }
        long untilIdle = lastPolledNanos + idleNanos - now;
        if (untilIdle > 0 || sendCq.hasBlockingPoller() || recvCq.hasBlockingPoller()) {
            // Polled: its poller drives it (a blocking one however long since it last got a
            // core). Looking again after the longest idle wait, not when this poll turns idle,
            // wakes this thread every 32 ms (or quarter ACK timeout) instead of every 10 while
            // an application keeps polling: on two cores each wake-up takes a core from a rank
            // (docs/benchmarks.md, "The fallback's looks"). The price: once the polls stop, the
            // fallback takes over up to that late, still well within the peer's ACK timeout.
            return Math.max(untilIdle, idleLookMaxNanos);
        }
        qp.counters().increment(Counter.FALLBACK_DRIVES);
        long first = idleNanos / IDLE_DRIVES;
        boolean moved = drive(false);
        long polled = lastPolledNanos;
        if (moved || polled != idleSince || qp.writer().hasWork() || qp.awaitsPeerRacy()) {
            idleSince = polled; // a new idle spell, or one where something still happens
            idleLookNanos = first;
        } else {
            idleLookNanos = Math.max(first, Math.min(idleLookMaxNanos, 2 * idleLookNanos));
        }
        return idleLookNanos;
    }

    @Override
    public void releaseHeldAck() {
        if (ackHeld && qp.state() != QpState.CLOSED) {
            drive(false);
        }
    }

    private boolean drive(boolean mayLeaveAck) {
        SocketChannel ch = channel;
        if (qp.state() == QpState.ERROR && !ch.isOpen()) {
            return false; // nothing left to read or to tell the peer
        }
        TcpFrameReader r = qp.reader();
        long received = r.received();
        boolean moved = r.step(ch);
        TcpFrameWriter w = qp.writer();
        if (mayLeaveAck && qp.hasSent() && w.onlyAckWaits()) {
            long now = System.nanoTime();
            if (r.received() != received && !ackHeld) {
                ackHeld = true;
                ackHeldSince = now;
                return moved;
            }
            if (ackHeld && now - ackHeldSince < AckHold.NANOS) {
                return moved;
            }
        }
        ackHeld = false;
        if (w.hasWork() && !(mayLeaveAck && w.awaitingRoom())) { // the fallback tries anyway
            moved |= w.writeStep(ch);
        }
        return moved;
    }

    @Override
    public void stop() {
        sendCq.detach(qp);
        recvCq.detach(qp);
    }
}
