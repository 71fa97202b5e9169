package io.netreduce.collectives.algorithm;

import io.netreduce.verbs.CompletionQueue;
import io.netreduce.verbs.WorkCompletion;
import java.time.Duration;
import java.util.function.Supplier;

/**
 * Waits on a completion queue with a deadline: returns completions as they come, throws
 * a {@link HostException} on the first error completion and a {@link HostTimeoutException}
 * when nothing arrives for {@code timeout}. Between idle polls it lets a
 * {@link ProgressGuard} abort the wait. Reuses its completion array: no allocation per poll.
 */
public final class CompletionPump {
    /** How long one blocking poll lasts before the guard and the deadline are checked. */
    private static final Duration POLL_SLICE = Duration.ofMillis(10);

    private final CompletionQueue cq;
    private final WorkCompletion[] completions;
    private final long timeoutNanos;
    /** Time spent in polls that had to wait, for the communicator's counters. */
    private volatile long waitNanos;

    public CompletionPump(CompletionQueue cq, int batch, Duration timeout) {
        this.cq = cq;
        this.completions = new WorkCompletion[batch];
        for (int i = 0; i < batch; i++) {
            completions[i] = new WorkCompletion();
        }
        this.timeoutNanos = timeout.toNanos();
    }

    /**
     * Blocks until at least one completion is available and returns how many are in
     * {@link #completion(int)}. {@code context} describes what is awaited, for error messages;
     * it is only called when something goes wrong.
     */
    public int await(ProgressGuard guard, Supplier<String> context) {
        int n = cq.poll(completions);
        if (n == 0) {
            long start = System.nanoTime();
            n = awaitSome(guard, context, start);
            waitNanos += System.nanoTime() - start;
        }
        for (int i = 0; i < n; i++) {
            WorkCompletion wc = completions[i];
            if (!wc.status().isSuccess()) {
                throw new HostException(wc.opcode() + " work request failed: " + wc.status().description()
                        + (wc.detail().isEmpty() ? "" : " (" + wc.detail() + ")") + "; " + context.get());
            }
        }
        return n;
    }

    /** Total time {@link #await} has spent waiting, in nanoseconds. */
    public long waitNanos() {
        return waitNanos;
    }

    private int awaitSome(ProgressGuard guard, Supplier<String> context, long idleSince) {
        int n = 0;
        while (n == 0) {
            long now = System.nanoTime();
            if (now - idleSince > timeoutNanos) {
                throw new HostTimeoutException("no completion within " + Duration.ofNanos(timeoutNanos).toMillis()
                        + " ms: " + context.get());
            }
            guard.check(now - idleSince);
            try {
                n = cq.poll(completions, POLL_SLICE);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new HostException("interrupted while " + context.get(), e);
            }
        }
        return n;
    }

    public WorkCompletion completion(int i) {
        return completions[i];
    }
}
