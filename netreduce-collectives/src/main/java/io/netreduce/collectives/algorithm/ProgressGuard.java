package io.netreduce.collectives.algorithm;

/**
 * Called while an operation waits for completions, so the layer above can abort it early
 * (a peer reported a failure, the communicator was closed) by throwing.
 */
@FunctionalInterface
public interface ProgressGuard {
    ProgressGuard NONE = idleNanos -> { };

    /** {@code idleNanos}: how long no completion has arrived. Throw to abort the wait. */
    void check(long idleNanos);
}
