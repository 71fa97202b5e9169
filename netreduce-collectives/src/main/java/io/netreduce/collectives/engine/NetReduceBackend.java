package io.netreduce.collectives.engine;

import io.netreduce.collectives.Communicator;
import io.netreduce.collectives.CommunicatorConfig;
import io.netreduce.collectives.spi.CommunicatorProvider;

/** "netreduce": in-network aggregation through the configured switch; ring without one. */
public final class NetReduceBackend implements CommunicatorProvider {
    @Override
    public String name() {
        return CommunicatorConfig.NETREDUCE;
    }

    @Override
    public String description() {
        return "in-network aggregation through a NetReduce switch (falls back to ring all-reduce without one)";
    }

    @Override
    public Communicator open(CommunicatorConfig config) {
        return GroupCommunicator.open(config.toBuilder().algorithm(name()).build(), null);
    }
}
