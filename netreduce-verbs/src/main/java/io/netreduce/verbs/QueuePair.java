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

    /** Live counters of this queue pair. */
    Counters counters();

    /** Destroys the queue pair; outstanding requests complete as flushed. */
    @Override
    void close();
}
