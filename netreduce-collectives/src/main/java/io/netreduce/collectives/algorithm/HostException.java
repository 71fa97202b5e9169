package io.netreduce.collectives.algorithm;

/** A host-layer operation failed: an error completion, a result that does not match, a stall. */
public class HostException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public HostException(String message) {
        super(message);
    }

    public HostException(String message, Throwable cause) {
        super(message, cause);
    }
}
