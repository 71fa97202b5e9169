package io.netreduce.verbs.tcp;

import io.netreduce.verbs.QpState;
import java.nio.channels.SocketChannel;

/**
 * {@link TcpProgress#POLL}: no threads of its own. A poller of the queue pair's completion
 * queues drives the non-blocking socket ({@link #progress()}), a post writes what the socket
 * takes at once, and the device drives a queue pair nobody polls, as an RC NIC keeps
 * answering while its application computes. The data is copied by the thread that consumes
 * it, with no hand-over between threads.
 */
final class PolledProgress implements TcpProgressDriver {
    private final TcpQueuePair qp;
    private final TcpCompletionQueue sendCq;
    private final TcpCompletionQueue recvCq;
    private volatile SocketChannel channel;
    private volatile long lastPolledNanos;

    PolledProgress(TcpQueuePair qp, TcpCompletionQueue sendCq, TcpCompletionQueue recvCq) {
        this.qp = qp;
        this.sendCq = sendCq;
        this.recvCq = recvCq;
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
        if (w.writeStep(channel) && w.frameInProgress()) {
            // The socket filled part-way: a poller blocked in select() does not yet wait for
            // it to drain. (Racy read of the frame state: at worst a spurious wake-up.)
            sendCq.wakeUp();
        }
    }

    @Override
    public boolean progress() {
        if (qp.state() == QpState.CLOSED) {
            return false;
        }
        lastPolledNanos = System.nanoTime();
        return drive();
    }

    @Override
    public void driveIfIdle(long now, long idleNanos) {
        if (qp.state() != QpState.CLOSED && now - lastPolledNanos > idleNanos) {
            drive();
        }
    }

    private boolean drive() {
        SocketChannel ch = channel;
        if (qp.state() == QpState.ERROR && !ch.isOpen()) {
            return false; // nothing left to read or to tell the peer
        }
        boolean moved = qp.reader().step(ch);
        TcpFrameWriter w = qp.writer();
        if (w.hasWork()) {
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
