package io.netreduce.verbs.support;

/**
 * How long a software provider may hold back the ACK of a receive it just completed, on a
 * queue pair that sends too, so that the application's reply carries it (one system call
 * and one datagram or segment fewer per round trip, as TCP's delayed ACK rides on data).
 * A poll that moves nothing sends a held ACK once it is this old, and a poller about to
 * sleep sends it at once: a peer waiting for it is kept waiting at most this long by a
 * polling application. Short against a reply computed in the same thread (a few µs), and
 * against any ACK timeout.
 */
public final class AckHold {
    public static final long NANOS = 20_000;

    private AckHold() {
    }
}
