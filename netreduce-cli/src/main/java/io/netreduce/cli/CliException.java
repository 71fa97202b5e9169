package io.netreduce.cli;

/**
 * A failure the user can act on, whose message is the one line the command prints (for
 * example "cannot bind 127.0.0.1:4791: address already in use"). Commands throw it
 * instead of letting low-level exceptions reach the user.
 */
public class CliException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final int exitCode;

    public CliException(String message) {
        this(message, ExitCode.FAILED, null);
    }

    public CliException(String message, Throwable cause) {
        this(message, ExitCode.FAILED, cause);
    }

    public CliException(String message, int exitCode, Throwable cause) {
        super(message, cause);
        this.exitCode = exitCode;
    }

    public int exitCode() {
        return exitCode;
    }
}
