package io.netreduce.verbs;

/**
 * Queue-pair states. ibverbs' RTR and RTS are folded into {@link #READY}: a queue pair
 * becomes ready in both directions when it is connected to its peer's {@link QpEndpoint}.
 */
public enum QpState {
    /** Created, not yet usable. */
    RESET,
    /** Receive requests may be posted; not yet connected. */
    INIT,
    /** Connected: sends and receives flow. */
    READY,
    /** A fatal error happened; every outstanding and later request completes as flushed. */
    ERROR,
    /** Destroyed. */
    CLOSED
}
