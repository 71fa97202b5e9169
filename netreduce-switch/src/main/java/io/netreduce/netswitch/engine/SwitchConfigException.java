package io.netreduce.netswitch.engine;

/** A control-plane request the switch refuses; {@link #kind()} says why (and maps to an HTTP status). */
public final class SwitchConfigException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public enum Kind {
        /** A value is malformed or out of range. */
        INVALID,
        /** No such ring. */
        NOT_FOUND,
        /** Clashes with an existing ring or connection. */
        CONFLICT,
        /** The aggregator-memory budget cannot hold the ring: the hosts fall back to ring all-reduce. */
        INSUFFICIENT_MEMORY
    }

    private final Kind kind;

    public SwitchConfigException(Kind kind, String message) {
        super(message);
        this.kind = kind;
    }

    public Kind kind() {
        return kind;
    }
}
