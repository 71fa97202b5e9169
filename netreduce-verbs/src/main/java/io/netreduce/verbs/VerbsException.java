package io.netreduce.verbs;

/**
 * A verbs operation failed synchronously: a bad argument, a queue that is full, a queue
 * pair in the wrong state, or a provider that cannot start. Failures of work that was
 * accepted arrive later as {@link WorkCompletion}s with an error {@link WcStatus}, as in
 * ibverbs.
 */
public class VerbsException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public VerbsException(String message) {
        super(message);
    }

    public VerbsException(String message, Throwable cause) {
        super(message, cause);
    }
}
