package io.netreduce.collectives.algorithm.netreduce;

import io.netreduce.collectives.algorithm.MessagePlan;

import io.netreduce.wire.ina.InaHeader;
import java.time.Duration;
import java.util.Objects;

/**
 * What one rank of a NetReduce ring needs to know to run the sliding window: the ring id
 * the switch knows the ring by, this rank and the ring's size (every result must sum that
 * many contributions), the element type, the window N (messages in flight), the payload
 * bytes per message, and how long to wait for a completion.
 */
public record RingSettings(int ringId, int rank, int ranks, int dtype, int window, int payloadBytes,
                           Duration timeout) {

    public RingSettings {
        if (ranks < 1 || ranks > 0xFFFF) {
            throw new IllegalArgumentException("ranks must be in [1, 65535]: " + ranks);
        }
        if (rank < 0 || rank >= ranks) {
            throw new IllegalArgumentException("rank " + rank + " outside a ring of " + ranks);
        }
        if (!InaHeader.isKnownDtype(dtype)) {
            throw new IllegalArgumentException("unknown INA dtype: " + dtype);
        }
        if (window < 1) {
            throw new IllegalArgumentException("window must be at least 1 message: " + window);
        }
        MessagePlan.checkPayloadBytes(payloadBytes);
        Objects.requireNonNull(timeout, "timeout");
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("timeout must be positive: " + timeout);
        }
    }
}
