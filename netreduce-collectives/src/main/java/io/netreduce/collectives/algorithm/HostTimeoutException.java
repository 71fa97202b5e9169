package io.netreduce.collectives.algorithm;

/** No completion arrived within the configured timeout; the message says what was awaited. */
public class HostTimeoutException extends HostException {
    private static final long serialVersionUID = 1L;

    public HostTimeoutException(String message) {
        super(message);
    }
}
