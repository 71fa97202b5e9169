package io.netreduce.collectives.engine;

import io.netreduce.collectives.EnvironmentVariables;

import io.netreduce.collectives.Communicator;
import io.netreduce.collectives.CommunicatorConfig;
import io.netreduce.collectives.algorithm.netreduce.NetReduceAlgorithm;
import io.netreduce.collectives.spi.CommunicatorProvider;

/** "netreduce": in-network aggregation through the configured switch ({@link NetReduceAlgorithm}). */
public final class NetReduceBackend implements CommunicatorProvider {
    @Override
    public String name() {
        return NetReduceAlgorithm.NAME;
    }

    @Override
    public String description() {
        return "in-network aggregation through a NetReduce switch (" + EnvironmentVariables.FALLBACK
                + "=ring runs the ring where it cannot)";
    }

    @Override
    public Communicator open(CommunicatorConfig config) {
        return GroupCommunicator.open(config.toBuilder().algorithm(name()).build(), null, new NetReduceAlgorithm());
    }
}
