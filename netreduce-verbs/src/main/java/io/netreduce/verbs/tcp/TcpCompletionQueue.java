package io.netreduce.verbs.tcp;

import io.netreduce.verbs.support.CompletionRing;

/** The TCP provider's completion queue: filled by the queue pairs' reader and writer threads. */
final class TcpCompletionQueue extends CompletionRing {
    TcpCompletionQueue(int capacity) {
        super(capacity);
    }
}
