package io.netreduce.verbs.support;

import io.netreduce.verbs.CompletionQueue;
import io.netreduce.verbs.VerbsException;
import io.netreduce.verbs.WcOpcode;
import io.netreduce.verbs.WcStatus;
import io.netreduce.verbs.WorkCompletion;
import java.time.Duration;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The completion queue of the software providers: a bounded ring of preallocated
 * {@link WorkCompletion}s. Provider threads copy fields in, pollers copy them out, so
 * neither side allocates; pollers may block until a deadline and are signalled only when
 * one is actually waiting. Each provider subclasses it so that a queue pair can refuse a
 * completion queue of another provider.
 */
public abstract class CompletionRing implements CompletionQueue {
    private final WorkCompletion[] ring;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition notEmpty = lock.newCondition();
    private long head; // next to poll
    private long tail; // next to fill
    private int waiters;
    private boolean closed;
    /** Copies of tail and head that a spinning poller reads without the lock. */
    private volatile long published;
    private volatile long consumed;
    private volatile boolean closing;
    /** Busy-waits before a blocking poll sleeps; null: sleep at once. */
    private final AdaptiveSpin spin;

    protected CompletionRing(int capacity) {
        this(capacity, null);
    }

    /**
     * {@code spin}: how a blocking poll busy-waits before it sleeps (null: it sleeps at once,
     * for providers whose pollers drive the progress themselves).
     */
    protected CompletionRing(int capacity, AdaptiveSpin spin) {
        this.spin = spin;
        if (capacity < 1) {
            throw new VerbsException("completion queue capacity must be positive: " + capacity);
        }
        ring = new WorkCompletion[capacity];
        for (int i = 0; i < capacity; i++) {
            ring[i] = new WorkCompletion();
        }
    }

    /**
     * Adds one completion; false if the queue is full (the caller's queue pair treats that
     * as fatal, as an overflowing CQ is in ibverbs). A closed queue swallows completions:
     * nobody can poll them any more.
     */
    public boolean push(long wrId, WcStatus status, WcOpcode opcode, int byteLength, boolean hasImmediate,
                        int immediate, int qpn, String detail) {
        lock.lock();
        try {
            if (closed) {
                return true;
            }
            if (tail - head == ring.length) {
                return false;
            }
            ring[(int) (tail % ring.length)].set(wrId, status, opcode, byteLength, hasImmediate, immediate, qpn,
                    detail);
            tail++;
            published = tail;
            if (waiters > 0) {
                notEmpty.signalAll();
            }
            return true;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public int poll(WorkCompletion[] out) {
        lock.lock();
        try {
            return drain(out);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public int poll(WorkCompletion[] out, Duration timeout) throws InterruptedException {
        long remaining = Math.max(0, timeout.toNanos());
        if (spin == null) {
            return await(out, remaining);
        }
        long start = System.nanoTime();
        long until = start + Math.min(spin.budgetNanos(), remaining);
        while (published == consumed && !closing && System.nanoTime() - until < 0) {
            spin.pause();
        }
        int n = await(out, remaining - (System.nanoTime() - start));
        spin.adapt(System.nanoTime() - start);
        return n;
    }

    /** Waits up to {@code remaining} ns for a completion, sleeping. */
    private int await(WorkCompletion[] out, long remaining) throws InterruptedException {
        lock.lock();
        try {
            while (tail == head && remaining > 0 && !closed) {
                waiters++;
                try {
                    remaining = notEmpty.awaitNanos(remaining);
                } finally {
                    waiters--;
                }
            }
            return drain(out);
        } finally {
            lock.unlock();
        }
    }

    private int drain(WorkCompletion[] out) {
        int n = (int) Math.min(out.length, tail - head);
        for (int i = 0; i < n; i++) {
            if (out[i] == null) {
                out[i] = new WorkCompletion();
            }
            out[i].copyFrom(ring[(int) (head % ring.length)]);
            head++;
        }
        consumed = head;
        return n;
    }

    /** Whether nothing is waiting to be polled. */
    protected boolean isEmpty() {
        lock.lock();
        try {
            return tail == head;
        } finally {
            lock.unlock();
        }
    }

    protected boolean isClosed() {
        lock.lock();
        try {
            return closed;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public int capacity() {
        return ring.length;
    }

    @Override
    public void close() {
        lock.lock();
        try {
            closed = true;
            closing = true;
            notEmpty.signalAll();
        } finally {
            lock.unlock();
        }
    }
}
