package io.netreduce.cli.allreduce;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The environment variables through which launched workers find each other; the names
 * are those netreduce-collectives' rendezvous reads (NETREDUCE_*).
 */
public final class RendezvousEnv {
    public static final String RANK = "NETREDUCE_RANK";
    public static final String WORLD_SIZE = "NETREDUCE_WORLD_SIZE";
    public static final String MASTER_ADDR = "NETREDUCE_MASTER_ADDR";
    public static final String MASTER_PORT = "NETREDUCE_MASTER_PORT";

    private RendezvousEnv() {
    }

    public static Map<String, String> forRank(int rank, int worldSize, String masterAddress, int masterPort) {
        Map<String, String> env = new LinkedHashMap<>();
        env.put(RANK, String.valueOf(rank));
        env.put(WORLD_SIZE, String.valueOf(worldSize));
        env.put(MASTER_ADDR, masterAddress);
        env.put(MASTER_PORT, String.valueOf(masterPort));
        return env;
    }
}
