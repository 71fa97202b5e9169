package io.netreduce.wire.control;

import java.util.List;

/**
 * What the switch says about one ring ({@code GET /rings/{id}}, and the answer to creating
 * it or registering its connections): its spec and registered connections, and how it is
 * doing. {@code state} is "registering" until every rank's connection is known, then
 * "ready", then "aggregating" once the first message arrived; {@code newestMessage} is null
 * before that.
 */
public record RingStatus(RingSpec spec, List<ConnectionEntry> connections, int packetsPerMessage,
                         long aggregatorBytes, String state, Long newestMessage, long messagesCompleted,
                         long aggregationsCompleted) {

    public RingStatus {
        connections = List.copyOf(connections);
    }
}
