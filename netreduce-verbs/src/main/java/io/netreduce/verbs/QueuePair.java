package io.netreduce.verbs;

import java.time.Duration;

/**
 * A Reliable Connection queue pair (ibverbs' {@code ibv_qp} of type RC).
 *
 * <p>Posting is thread-safe. Errors in accepted requests are reported as completions; a
 * fatal one moves the queue pair to {@link QpState#ERROR} and flushes every outstanding
 * and later request with {@link WcStatus#WR_FLUSH_ERR}.
 */
public interface QueuePair extends AutoCloseable {

    /** Queue-pair number, unique within its device. */
    int qpn();

    QpState state();

    /** What the peer needs to connect to this queue pair. */
    QpEndpoint localEndpoint();

    /** The peer this queue pair is connected to, or null before {@link #connect}. */
    QpEndpoint remoteEndpoint();

    /**
     * Connects to the peer's endpoint (INIT → READY). Providers that need a handshake
     * finish it within {@code timeout} or throw a {@link VerbsException} naming the peer.
     */
    void connect(QpEndpoint remote, Duration timeout);

    /** Posts a send request; throws {@link VerbsException} if the send queue is full or the QP is not ready. */
    void postSend(SendRequest request);

    /** Posts a receive request; allowed in INIT and READY. */
    void postRecv(RecvRequest request);

    /** Path MTU in payload bytes per packet. */
    int mtu();

    /**
     * Sends now the acknowledgement this queue pair may hold back for its next send to
     * carry. A software provider keeps the ACK of a receive for a few µs on a queue pair
     * that sends too, so that a reply carries it ({@link io.netreduce.verbs.support.AckHold}),
     * and sends it on the next poll or post, or at the device's idle drive (10 to 32 ms
     * after the last poll). A caller that will neither poll nor post for a while, such as a
     * collective that has finished and returns to an application that computes, calls this:
     * the peer's send completes only with that ACK. A NIC holds nothing back, so by default
     * this does nothing.
     */
    default void releaseHeldAck() {
    }

    /** Live counters of this queue pair. */
    Counters counters();

    /** Destroys the queue pair; outstanding requests complete as flushed. */
    @Override
    void close();
}
