package io.netreduce.verbs.soft;

import io.netreduce.verbs.support.AdaptiveSpin;

import io.netreduce.verbs.support.CompletionRing;

/**
 * The soft provider's completion queue. The device's event loop adds one completion per
 * work request (one short, uncontended lock per completion, never per packet).
 */
final class SoftCompletionQueue extends CompletionRing {
    SoftCompletionQueue(int capacity, AdaptiveSpin spin) {
        super(capacity, spin);
    }
}
