package io.netreduce.verbs.tcp;

import io.netreduce.verbs.Counter;
import io.netreduce.verbs.QpAttributes;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The local ACK timer of one {@link TcpQueuePair}, as an RC NIC has one: while a transmitted
 * request is unacknowledged and nothing moves for {@code ackTimeout × (retryCount + 1)},
 * the queue pair fails with RETRY_EXC_ERR (see {@link TcpQueuePair} for what counts as
 * movement). Checked on the device's {@link AckTimer} thread every quarter ACK timeout,
 * never on the writer, which may be the very thread that is stuck in a full socket.
 *
 * <p>Its fields are guarded by the queue pair's lock.
 */
final class TcpStallWatch {
    private static final Logger LOG = LoggerFactory.getLogger(TcpStallWatch.class);

    private final TcpQueuePair qp;
    private final QpAttributes attributes;
    private final long ackTimeoutNanos;
    private final int ackAttempts;
    private ScheduledFuture<?> task;
    private boolean awaitingAck;
    private long progressMark;
    private long progressNanos;
    private int ackTimeoutsCounted;

    TcpStallWatch(TcpQueuePair qp, QpAttributes attributes) {
        this.qp = qp;
        this.attributes = attributes;
        this.ackTimeoutNanos = attributes.ackTimeout().toNanos();
        this.ackAttempts = attributes.retryCount() + 1;
    }

    /** Starts watching; caller holds the queue pair's lock. */
    void startLocked(AckTimer timer) {
        try {
            task = timer.watch(this::check, attributes.ackTimeout());
        } catch (RejectedExecutionException e) {
            // The device is closing, and closes this queue pair next.
            LOG.debug("QP {}: no ACK timer, the device is closing", qp.qpn());
        }
    }

    /** Stops watching; caller holds the queue pair's lock. */
    void cancelLocked() {
        if (task != null) {
            task.cancel(false);
            task = null;
        }
    }

    /**
     * The stall clock runs only while a transmitted request awaits its ACK (not while idle,
     * and not in RNR backoff, when nothing transmitted is outstanding); it restarts whenever
     * anything moves. Never fails early: a stall is measured from the first check that saw
     * it, which is no earlier than its real start.
     */
    private void check() {
        java.nio.channels.SocketChannel toClose = null;
        qp.lock.lock();
        try {
            if (!qp.isReady()) {
                cancelLocked();
                return;
            }
            long now = System.nanoTime();
            if (!qp.awaitsAckLocked()) {
                awaitingAck = false;
                return;
            }
            // Each part only grows, so the sum changes exactly when one of them moved.
            long mark = qp.progressMarkLocked();
            if (!awaitingAck || mark != progressMark) {
                awaitingAck = true;
                progressMark = mark;
                progressNanos = now;
                ackTimeoutsCounted = 0;
                return;
            }
            long waited = now - progressNanos;
            int expired = (int) Math.min(ackAttempts, waited / ackTimeoutNanos);
            while (ackTimeoutsCounted < expired) {
                qp.counters().increment(Counter.ACK_TIMEOUTS);
                ackTimeoutsCounted++;
            }
            if (expired >= ackAttempts) {
                toClose = qp.failStalledLocked("no progress from peer " + qp.remoteEndpoint() + " for "
                        + TimeUnit.NANOSECONDS.toMillis(waited) + " ms: the " + attributes.ackTimeout().toMillis()
                        + " ms ACK timeout expired " + ackAttempts + " times (retryCount " + attributes.retryCount()
                        + "); the peer hangs or the path drops everything");
            }
        } catch (RuntimeException e) {
            // A periodic task that throws is never run again: say so rather than lose the timer silently.
            LOG.error("QP {}: ACK timer check failed", qp.qpn(), e);
        } finally {
            qp.lock.unlock();
        }
        // Wakes the reader and a writer blocked in write(); they find the queue pair in ERROR.
        TcpDevice.closeQuietly(toClose);
    }
}
