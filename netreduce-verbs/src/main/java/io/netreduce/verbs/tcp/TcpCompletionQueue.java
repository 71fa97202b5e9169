package io.netreduce.verbs.tcp;

import io.netreduce.verbs.CompletionQueue;
import io.netreduce.verbs.VerbsException;
import io.netreduce.verbs.WcOpcode;
import io.netreduce.verbs.WcStatus;
import io.netreduce.verbs.WorkCompletion;
import java.time.Duration;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A bounded ring of preallocated {@link WorkCompletion}s: provider threads copy fields in,
 * the poller copies them out, so neither side allocates.
 */
final class TcpCompletionQueue implements CompletionQueue {
    private final WorkCompletion[] ring;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition notEmpty = lock.newCondition();
    private long head; // next to poll
    private long tail; // next to fill
    private boolean closed;

    TcpCompletionQueue(int capacity) {
        if (capacity < 1) {
            throw new VerbsException("completion queue capacity must be positive: " + capacity);
        }
        ring = new WorkCompletion[capacity];
        for (int i = 0; i < capacity; i++) {
            ring[i] = new WorkCompletion();
        }
    }

    /**
     * Adds one completion; false if the queue is full (the caller treats that as fatal). A
     * closed queue swallows completions: nobody can poll them any more.
     */
    boolean push(long wrId, WcStatus status, WcOpcode opcode, int byteLength, boolean hasImmediate,
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
            notEmpty.signal();
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
        long remaining = timeout.toNanos();
        lock.lock();
        try {
            while (head == tail && !closed && remaining > 0) {
                remaining = notEmpty.awaitNanos(remaining);
            }
            return drain(out);
        } finally {
            lock.unlock();
        }
    }

    private int drain(WorkCompletion[] out) {
        int n = 0;
        while (n < out.length && head != tail) {
            out[n++].copyFrom(ring[(int) (head % ring.length)]);
            head++;
        }
        return n;
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
            notEmpty.signalAll();
        } finally {
            lock.unlock();
        }
    }

}
