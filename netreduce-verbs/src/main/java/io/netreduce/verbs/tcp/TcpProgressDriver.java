package io.netreduce.verbs.tcp;

import java.nio.channels.SocketChannel;

/**
 * Who moves a connected {@link TcpQueuePair}'s bytes, one implementation per
 * {@link TcpProgress} mode: {@link ThreadedProgress} (a reader and a writer thread) or
 * {@link PolledProgress} (whoever polls the completion queues). The queue pair calls these
 * at the few points where the two differ; everything else is the same code.
 */
interface TcpProgressDriver {

    /** Whether the connection's socket blocks. */
    boolean blockingSocket();

    /** The connection is installed; start moving its bytes. Caller holds the queue pair's lock. */
    void startLocked(SocketChannel channel);

    /**
     * A send request was queued at {@code index} ({@code length} bytes). Caller holds the
     * lock. Returns true if it claimed the socket for the posting thread to write the request
     * itself, in {@link #afterSendQueued}.
     */
    boolean sendQueuedLocked(long index, long length);

    /** Outside the lock, right after {@link #sendQueuedLocked}: write now what this mode writes on the poster. */
    void afterSendQueued(boolean claimed);

    /**
     * Outside the lock: a control frame was queued by a poster, not by the reader (the ACK
     * that tells an RNR-NAKed requester a receive is posted); write it now if this mode's
     * writer would not otherwise wake for it. The poster signalled {@code changed}.
     */
    default void afterControlQueued() {
    }

    /** A poller of one of the queue pair's completion queues asks for progress; true if anything moved. */
    boolean progress();

    /**
     * The device's fallback for a queue pair nobody has polled for {@code idleNanos}; returns
     * the nanoseconds until it next wants to be asked ({@link Long#MAX_VALUE}: never).
     */
    long driveIfIdle(long now, long idleNanos);

    /** Writes the ACK a poll held back for a reply to carry, if one is held ({@link io.netreduce.verbs.QueuePair#releaseHeldAck}). */
    default void releaseHeldAck() {
    }

    /** The queue pair is closed: stop (outside the lock). */
    void stop();
}
