package io.netreduce.verbs.tcp;

import io.netreduce.verbs.QpEndpoint;
import io.netreduce.verbs.QpState;
import io.netreduce.verbs.VerbsException;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Connection set-up of one {@link TcpQueuePair}: exactly one side dials, the one whose
 * (address, port, qpn) is lower; the other side's device accepts the connection and hands
 * it over by the QPN in the handshake ({@link #offerIncoming}), so both sides may call
 * connect in either order. Has its own lock: set-up never contends with the data path.
 */
final class TcpConnector {
    private static final Logger LOG = LoggerFactory.getLogger(TcpConnector.class);

    private final TcpQueuePair qp;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition offered = lock.newCondition();
    private QpEndpoint connecting;
    private boolean expectingIncoming;
    private boolean connected;
    private boolean closed;
    private SocketChannel pendingIncoming;
    private int pendingSourceQpn;

    TcpConnector(TcpQueuePair qp) {
        this.qp = qp;
    }

    /** The handshaken connection to {@code remote}, within {@code timeout}; throws naming the peer and the step. */
    SocketChannel connect(QpEndpoint remote, Duration timeout) {
        long deadline = System.nanoTime() + Math.max(0, timeout.toNanos());
        boolean dialer = compare(qp.localEndpoint(), remote) < 0;
        lock.lock();
        try {
            if (qp.state() != QpState.INIT || connecting != null || connected) {
                throw new VerbsException("QP " + qp.qpn() + " cannot connect to " + remote + ": it is " + qp.state()
                        + (connecting != null ? " and already connecting to " + connecting : ""));
            }
            connecting = remote;
            expectingIncoming = !dialer;
        } finally {
            lock.unlock();
        }
        try {
            SocketChannel ch = dialer ? dial(remote, deadline, timeout) : awaitIncoming(remote, deadline, timeout);
            lock.lock();
            try {
                connected = true;
            } finally {
                lock.unlock();
            }
            return ch;
        } finally {
            lock.lock();
            try {
                connecting = null;
                expectingIncoming = false;
            } finally {
                lock.unlock();
            }
        }
    }

    /** Lets a connect that failed after this returned be tried again. */
    void connectFailed() {
        lock.lock();
        try {
            connected = false;
        } finally {
            lock.unlock();
        }
    }

    private SocketChannel dial(QpEndpoint remote, long deadline, Duration timeout) {
        InetSocketAddress target = new InetSocketAddress(remote.address(), remote.port());
        IOException last = null;
        int attempts = 0;
        while (true) {
            long remainingMs = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
            if (remainingMs <= 0 || qp.state() != QpState.INIT) {
                throw new VerbsException("QP " + qp.qpn() + ": connecting to peer " + remote + " failed at step 'dial' "
                        + "within " + timeout.toMillis() + " ms after " + attempts + " attempts"
                        + (last != null ? ": " + last : "")
                        + (qp.state() != QpState.INIT ? " (QP is " + qp.state() + ")" : ""));
            }
            attempts++;
            SocketChannel ch = null;
            try {
                ch = SocketChannel.open();
                ch.bind(new InetSocketAddress(qp.localEndpoint().address(), 0));
                ch.socket().connect(target, (int) Math.min(Integer.MAX_VALUE, remainingMs));
                ch.write(Handshake.encode(Handshake.KIND_HELLO, qp.qpn(), remote.qpn(), Handshake.REASON_NONE));
                ch.socket().setSoTimeout((int) Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
                byte[] bytes = new byte[Handshake.LENGTH];
                new DataInputStream(ch.socket().getInputStream()).readFully(bytes);
                ch.socket().setSoTimeout(0);
                ByteBuffer reply = ByteBuffer.wrap(bytes);
                String bad = Handshake.validate(reply);
                if (bad != null) {
                    throw new VerbsException("QP " + qp.qpn() + ": peer " + remote + " answered the handshake wrongly: "
                            + bad);
                }
                if (Handshake.kind(reply) != Handshake.KIND_ACCEPT) {
                    throw new VerbsException("QP " + qp.qpn() + ": peer " + remote + " rejected the connection: "
                            + Handshake.reasonText(Handshake.reason(reply)));
                }
                return ch;
            } catch (ConnectException | SocketTimeoutException | EOFException e) {
                // Refused (nothing listening yet), no answer in time, or dropped: retry until the deadline.
                TcpDevice.closeQuietly(ch);
                last = e;
                sleepQuietly(Math.min(20, Math.max(1, remainingMs / 4)));
            } catch (IOException e) {
                TcpDevice.closeQuietly(ch);
                throw new VerbsException("QP " + qp.qpn() + ": connecting to peer " + remote + " failed at step 'dial': "
                        + e, e);
            } catch (RuntimeException e) {
                TcpDevice.closeQuietly(ch);
                throw e;
            }
        }
    }

    private SocketChannel awaitIncoming(QpEndpoint remote, long deadline, Duration timeout) {
        lock.lock();
        try {
            while (true) {
                if (pendingIncoming != null) {
                    SocketChannel ch = pendingIncoming;
                    pendingIncoming = null;
                    if (pendingSourceQpn == remote.qpn()) {
                        return ch;
                    }
                    LOG.info("QP {}: dropping a connection from QP {} while waiting for {}", qp.qpn(), pendingSourceQpn,
                            remote);
                    TcpDevice.closeQuietly(ch);
                }
                long remaining = deadline - System.nanoTime();
                if (remaining <= 0 || closed || qp.state() != QpState.INIT) {
                    throw new VerbsException("QP " + qp.qpn() + ": connecting to peer " + remote + " failed at step "
                            + "'accept': the peer did not dial " + qp.localEndpoint() + " within " + timeout.toMillis()
                            + " ms" + (qp.state() != QpState.INIT ? " (QP is " + qp.state() + ")" : ""));
                }
                offered.awaitNanos(remaining);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new VerbsException("QP " + qp.qpn() + ": interrupted while waiting for peer " + remote, e);
        } finally {
            lock.unlock();
        }
    }

    /** Called by the device's accept thread with a connection whose HELLO names this QP; returns the handshake reason. */
    int offerIncoming(SocketChannel ch, int sourceQpn) {
        lock.lock();
        try {
            if (closed || connected || qp.state() != QpState.INIT || pendingIncoming != null
                    || (connecting != null && !expectingIncoming)) {
                return Handshake.REASON_NOT_CONNECTABLE;
            }
            if (connecting != null && connecting.qpn() != sourceQpn) {
                return Handshake.REASON_WRONG_PEER;
            }
            pendingIncoming = ch;
            pendingSourceQpn = sourceQpn;
            offered.signalAll();
            return Handshake.REASON_NONE;
        } finally {
            lock.unlock();
        }
    }

    /** Ends set-up for good: a connection offered and not taken is closed, a waiting connect gives up. */
    void close() {
        lock.lock();
        try {
            closed = true;
            TcpDevice.closeQuietly(pendingIncoming);
            pendingIncoming = null;
            offered.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** Orders endpoints by (address bytes, port, qpn) so both sides agree who dials. */
    static int compare(QpEndpoint a, QpEndpoint b) {
        int c = Arrays.compareUnsigned(a.address().getAddress(), b.address().getAddress());
        if (c != 0) {
            return c;
        }
        c = Integer.compare(a.port(), b.port());
        return c != 0 ? c : Integer.compare(a.qpn(), b.qpn());
    }

    private static void sleepQuietly(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new VerbsException("interrupted while connecting", e);
        }
    }
}
