package io.netreduce.verbs;

import java.time.Duration;

/**
 * A completion queue (ibverbs' {@code ibv_cq}). Safe to poll from one thread while the
 * provider's threads add to it.
 */
public interface CompletionQueue extends AutoCloseable {

    /**
     * Non-blocking poll: moves up to {@code out.length} completions into {@code out} and
     * returns how many.
     */
    int poll(WorkCompletion[] out);

    /**
     * Blocking poll: waits until at least one completion is available or {@code timeout}
     * has passed, then behaves as {@link #poll(WorkCompletion[])}. Returns 0 on timeout.
     */
    int poll(WorkCompletion[] out, Duration timeout) throws InterruptedException;

    /** Maximum number of completions the queue holds; overflow puts its queue pairs in error. */
    int capacity();

    @Override
    void close();
}
