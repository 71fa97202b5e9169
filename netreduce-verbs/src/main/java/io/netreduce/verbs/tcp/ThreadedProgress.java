package io.netreduce.verbs.tcp;

import java.nio.channels.SocketChannel;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link TcpProgress#THREADS}: a <em>writer</em> thread sends request frames and the ACK/NAK
 * frames the reader asks for (a small request posted while the socket is free is written by
 * the posting thread instead, which saves waking the writer, the largest single cost of a
 * small message's latency); a <em>reader</em> thread never blocks on anything but the
 * socket and never writes. A reader that never waits on a write is what makes bidirectional
 * bulk traffic deadlock-free: every blocked write is eventually drained by the peer's reader.
 */
final class ThreadedProgress implements TcpProgressDriver {
    private static final Logger LOG = LoggerFactory.getLogger(ThreadedProgress.class);
    /**
     * Request frames up to this size are written by the posting thread itself when the
     * socket is free and nothing is queued ahead. Larger frames go to the writer so that
     * postSend does not wait on the socket for long.
     */
    static final int INLINE_WRITE_BYTES = 64 * 1024;

    private final TcpQueuePair qp;
    private SocketChannel channel;
    private Thread reader;
    private Thread writer;

    ThreadedProgress(TcpQueuePair qp) {
        this.qp = qp;
    }

    @Override
    public boolean blockingSocket() {
        return true;
    }

    @Override
    public void startLocked(SocketChannel ch) {
        channel = ch;
        reader = new Thread(() -> qp.reader().loop(ch), "tcp-verbs-qp" + qp.qpn() + "-reader");
        writer = new Thread(() -> qp.writer().writeLoop(ch), "tcp-verbs-qp" + qp.qpn() + "-writer");
        reader.setDaemon(true);
        writer.setDaemon(true);
        reader.start();
        writer.start();
    }

    @Override
    public boolean sendQueuedLocked(long index, long length) {
        TcpFrameWriter w = qp.writer();
        if (w.socketBusyLocked() || length > INLINE_WRITE_BYTES || !qp.isNextToTransmitLocked(index)) {
            qp.changed.signalAll();
            return false;
        }
        qp.takeForTransmitLocked(index);
        w.claimForRequestLocked(index);
        return true;
    }

    @Override
    public void afterSendQueued(boolean claimed) {
        if (claimed) {
            qp.writer().writeInline(channel);
        }
    }

    @Override
    public boolean progress() {
        return false; // the threads move everything
    }

    @Override
    public long driveIfIdle(long now, long idleNanos) {
        return Long.MAX_VALUE; // never driven by the device
    }

    @Override
    public void stop() {
        join(reader);
        join(writer);
    }

    private static void join(Thread t) {
        if (t == null || t == Thread.currentThread()) {
            return;
        }
        try {
            t.join(2_000);
            if (t.isAlive()) {
                LOG.warn("{} did not stop within 2 s", t.getName());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
