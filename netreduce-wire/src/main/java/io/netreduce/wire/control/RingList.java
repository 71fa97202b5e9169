package io.netreduce.wire.control;

import java.util.List;

/** Every ring on a switch ({@code GET /rings}) and its aggregator memory. */
public record RingList(List<RingStatus> rings, long memoryBudget, long memoryUsed) {

    public RingList {
        rings = List.copyOf(rings);
    }
}
