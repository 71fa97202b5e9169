package io.netreduce.verbs.soft;

import java.util.function.IntFunction;

/**
 * A bounded single-consumer ring of preallocated work-queue entries. Posting threads
 * serialise among themselves on a producer lock (never taken by the consumer); whoever runs
 * the device's protocol consumes without locks of its own. {@code posted} and {@code retired} are the
 * hand-over points: the volatile write of {@code posted} publishes a filled entry, the
 * volatile write of {@code retired} returns entries to producers.
 */
final class WorkRing<T> {
    private final Object[] entries;
    private final Object producerLock = new Object();
    private volatile long posted;
    private volatile long retired;

    WorkRing(int capacity, IntFunction<T> factory) {
        entries = new Object[capacity];
        for (int i = 0; i < capacity; i++) {
            entries[i] = factory.apply(i);
        }
    }

    int capacity() {
        return entries.length;
    }

    Object producerLock() {
        return producerLock;
    }

    /** Producer side, under {@link #producerLock()}: the entry to fill next, or null if full. */
    @SuppressWarnings("unchecked")
    T claim() {
        long p = posted;
        if (p - retired >= entries.length) {
            return null;
        }
        return (T) entries[(int) (p % entries.length)];
    }

    /** Producer side, under {@link #producerLock()}: publishes the entry returned by {@link #claim()}. */
    void publish() {
        posted = posted + 1;
    }

    long posted() {
        return posted;
    }

    long retired() {
        return retired;
    }

    /** Consumer side: entries before {@code index} are done and may be refilled. */
    void retire(long index) {
        retired = index;
    }

    @SuppressWarnings("unchecked")
    T at(long index) {
        return (T) entries[(int) (index % entries.length)];
    }
}
