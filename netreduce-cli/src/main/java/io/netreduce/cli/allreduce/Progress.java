package io.netreduce.cli.allreduce;

import io.netreduce.cli.Sizes;
import java.io.PrintStream;
import java.util.Locale;

/**
 * Progress on stderr while workers run: one line per finished row, so that a long run
 * visibly moves and a stuck one shows where it stopped.
 */
public final class Progress implements Results.ResultListener {
    private final PrintStream err;
    private final String command;
    private final int totalRows;
    private int done;

    public Progress(PrintStream err, String command, int totalRows) {
        this.err = err;
        this.command = command;
        this.totalRows = totalRows;
    }

    public void note(String message) {
        err.println(command + ": " + message);
    }

    @Override
    public synchronized void rowComplete(Row row) {
        done++;
        err.println(String.format(Locale.ROOT, "%s: [%d/%d] %-9s %8s %s %10.1f us  %s", command, done, totalRows,
                row.algorithm(), Sizes.human(row.size()), row.inPlace() ? "in-place    " : "out-of-place",
                row.timeUs(), row.wrong() == 0 ? "ok" : row.wrong() + " WRONG"));
    }
}
