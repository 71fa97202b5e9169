package io.netreduce.collectives;

/**
 * A collective operation failed or could not start: a peer died or reported an error, the
 * ranks' tensors differ in length, nothing arrived within the timeout, or setup failed.
 * The message names the rank(s) involved. After one, the communicator is broken: later
 * operations fail at once with the same cause; close it and open a new one.
 */
public class CollectiveException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public CollectiveException(String message) {
        super(message);
    }

    public CollectiveException(String message, Throwable cause) {
        super(message, cause);
    }
}
