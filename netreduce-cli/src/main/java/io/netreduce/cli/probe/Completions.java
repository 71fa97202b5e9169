package io.netreduce.cli.probe;

import io.netreduce.cli.CliException;
import io.netreduce.verbs.CompletionQueue;
import io.netreduce.verbs.WorkCompletion;
import java.time.Duration;

/**
 * Waits for completions the way a latency tool must: spin briefly (a blocking wait adds a
 * thread wake-up to every measurement), then block in short slices so that a stalled peer
 * cannot hang the probe past its deadline. Error completions become one-line failures.
 */
final class Completions {
    /** How long to spin before blocking; short, since this machine may have few cores. */
    private static final long SPIN_NANOS = 20_000;
    private static final Duration SLICE = Duration.ofMillis(1);

    private Completions() {
    }

    /** Polls {@code cq} until at least one completion arrives; returns how many (≤ out.length). */
    static int await(CompletionQueue cq, WorkCompletion[] out, long deadlineNanos, String what)
            throws InterruptedException {
        long spinUntil = System.nanoTime() + SPIN_NANOS;
        while (true) {
            int n = cq.poll(out);
            if (n == 0) {
                long now = System.nanoTime();
                if (now < spinUntil) {
                    Thread.onSpinWait();
                    continue;
                }
                if (now > deadlineNanos) {
                    throw new CliException("timed out waiting for " + what);
                }
                n = cq.poll(out, SLICE);
                if (n == 0) {
                    continue;
                }
            }
            for (int i = 0; i < n; i++) {
                if (!out[i].status().isSuccess()) {
                    throw new CliException(what + " failed: " + out[i].status() + " ("
                            + out[i].status().description() + ")"
                            + (out[i].detail().isEmpty() ? "" : ": " + out[i].detail()));
                }
            }
            return n;
        }
    }

    /** Takes whatever completions are ready without waiting, failing on an error status. */
    static int drain(CompletionQueue cq, WorkCompletion[] out, String what) {
        int n = cq.poll(out);
        for (int i = 0; i < n; i++) {
            if (!out[i].status().isSuccess()) {
                throw new CliException(what + " failed: " + out[i].status() + " (" + out[i].status().description() + ")");
            }
        }
        return n;
    }

    static WorkCompletion[] array(int n) {
        WorkCompletion[] wcs = new WorkCompletion[n];
        for (int i = 0; i < n; i++) {
            wcs[i] = new WorkCompletion();
        }
        return wcs;
    }
}
