package io.netreduce.collectives.engine;

import io.netreduce.collectives.Communicator;
import io.netreduce.collectives.CommunicatorConfig;
import io.netreduce.collectives.algorithm.ring.RingAlgorithm;
import io.netreduce.collectives.spi.CommunicatorProvider;

/** "ring": pipelined reduce-scatter + all-gather with host-side summation ({@link RingAlgorithm}). */
public final class RingBackend implements CommunicatorProvider {
    @Override
    public String name() {
        return RingAlgorithm.NAME;
    }

    @Override
    public String description() {
        return "ring all-reduce (pipelined reduce-scatter + all-gather, summed on the hosts)";
    }

    @Override
    public Communicator open(CommunicatorConfig config) {
        return GroupCommunicator.open(config.toBuilder().algorithm(name()).build(), null, new RingAlgorithm());
    }
}
