package io.netreduce.cli;

import java.net.BindException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.util.concurrent.TimeoutException;

/**
 * Turns an exception chain into the one line a user reads: the first
 * {@link CliException} in the chain says it best; otherwise the deepest exception that
 * names a well-known network failure; otherwise the top-level message.
 */
public final class Failures {
    private Failures() {
    }

    public static String describe(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof CliException) {
                return t.getMessage();
            }
        }
        for (Throwable t = e; t != null; t = t.getCause()) {
            String known = wellKnown(t);
            if (known != null) {
                String top = e == t ? null : e.getMessage();
                return top != null && !top.contains(String.valueOf(t.getMessage())) ? top + ": " + known : known;
            }
        }
        String msg = e.getMessage();
        return msg == null || msg.isBlank() ? e.getClass().getSimpleName() : msg;
    }

    public static int exitCode(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof CliException c) {
                return c.exitCode();
            }
            if (t instanceof InterruptedException) {
                return ExitCode.INTERRUPTED;
            }
        }
        return ExitCode.FAILED;
    }

    private static String wellKnown(Throwable t) {
        String msg = t.getMessage() == null ? "" : t.getMessage();
        if (t instanceof BindException) {
            return "cannot bind: " + (msg.isEmpty() ? "address already in use" : msg);
        }
        if (t instanceof ConnectException) {
            return "cannot connect: " + (msg.isEmpty() ? "connection refused" : msg);
        }
        if (t instanceof NoRouteToHostException) {
            return "unreachable: " + msg;
        }
        if (t instanceof UnknownHostException) {
            return "unknown host: " + msg;
        }
        if (t instanceof SocketTimeoutException || t instanceof TimeoutException) {
            return "timed out: " + msg;
        }
        return null;
    }
}
