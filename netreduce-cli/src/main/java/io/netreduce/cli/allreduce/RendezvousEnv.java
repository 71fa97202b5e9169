package io.netreduce.cli.allreduce;

import io.netreduce.collectives.EnvironmentVariables;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The environment through which launched workers find each other: the rendezvous
 * variables of {@link EnvironmentVariables}, as a launcher sets them.
 */
public final class RendezvousEnv {
    private RendezvousEnv() {
    }

    public static Map<String, String> forRank(int rank, int worldSize, String masterAddress, int masterPort) {
        Map<String, String> env = new LinkedHashMap<>();
        env.put(EnvironmentVariables.RANK, String.valueOf(rank));
        env.put(EnvironmentVariables.WORLD_SIZE, String.valueOf(worldSize));
        env.put(EnvironmentVariables.MASTER_ADDR, masterAddress);
        env.put(EnvironmentVariables.MASTER_PORT, String.valueOf(masterPort));
        return env;
    }
}
