package io.netreduce.cli;

/** Exit codes of the netreduce command, stable so that scripts and CI can tell failures apart. */
public final class ExitCode {
    /** Everything ran and every result was right. */
    public static final int OK = 0;
    /** The command could not do its work (port in use, unreachable peer, a worker died...). */
    public static final int FAILED = 1;
    /** Bad command line: unknown flag, malformed value. */
    public static final int USAGE = 2;
    /** The command ran to the end but at least one all-reduce result was wrong. */
    public static final int WRONG_RESULTS = 3;
    /** Stopped by Ctrl-C (128 + SIGINT, as shells report it). */
    public static final int INTERRUPTED = 130;

    private ExitCode() {
    }
}
