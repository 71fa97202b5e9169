package io.netreduce.netswitch.engine;

import java.util.List;

/**
 * A snapshot of one ring for the control plane: its configuration, the connections
 * registered so far, and its progress (read without synchronising with the datapath, so
 * possibly a moment old).
 */
public record RingInfo(RingConfig config, List<ConnectionSpec> connections, String state, Integer newestMessage,
                       long messagesCompleted, long aggregationsCompleted, long aggregatorBytes) {
}
