package io.netreduce.host.inproc;

import io.netreduce.verbs.CompletionQueue;
import io.netreduce.verbs.WcOpcode;
import io.netreduce.verbs.WcStatus;
import io.netreduce.verbs.WorkCompletion;
import java.time.Duration;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/** A bounded ring of preallocated completions guarded by a lock. */
final class InprocCompletionQueue implements CompletionQueue {
    private final WorkCompletion[] ring;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition nonEmpty = lock.newCondition();
    private int head;
    private int size;

    InprocCompletionQueue(int capacity) {
        ring = new WorkCompletion[capacity];
        for (int i = 0; i < capacity; i++) {
            ring[i] = new WorkCompletion();
        }
    }

    /** Returns false when the queue is full (the caller's queue pair then fails). */
    boolean add(long wrId, WcStatus status, WcOpcode opcode, int bytes, int qpn, String detail) {
        lock.lock();
        try {
            if (size == ring.length) {
                return false;
            }
            ring[(head + size) % ring.length].set(wrId, status, opcode, bytes, false, 0, qpn, detail);
            size++;
            nonEmpty.signal();
            return true;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public int poll(WorkCompletion[] out) {
        lock.lock();
        try {
            int n = Math.min(out.length, size);
            for (int i = 0; i < n; i++) {
                out[i].copyFrom(ring[head]);
                head = (head + 1) % ring.length;
            }
            size -= n;
            return n;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public int poll(WorkCompletion[] out, Duration timeout) throws InterruptedException {
        long nanos = timeout.toNanos();
        lock.lock();
        try {
            while (size == 0) {
                if (nanos <= 0) {
                    return 0;
                }
                nanos = nonEmpty.awaitNanos(nanos);
            }
            return poll(out);
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
    }

}
