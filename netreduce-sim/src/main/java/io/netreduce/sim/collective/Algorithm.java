package io.netreduce.sim.collective;

/** The all-reduce algorithms the simulator schedules. */
public enum Algorithm {
    /** One ring through all P GPUs: reduce-scatter then all-gather, 2(P−1) steps of S/P. */
    FLAT_RING("Flat Ring", "flat-ring"),
    /**
     * Tencent-style hierarchical all-reduce: reduce to a master GPU per machine (pipelined chain),
     * ring all-reduce among the M masters, broadcast back (pipelined chain).
     */
    HIERARCHICAL("Hierarchical", "hierarchical"),
    /** NetReduce with one GPU per machine on the ring: reduce to master, one NetReduce ring through the switch, broadcast. */
    NETREDUCE("NetReduce", "netreduce"),
    /**
     * Parallel NetReduce: ring reduce-scatter inside each machine, n NetReduce rings (one per GPU
     * position, each carrying S/n) across machines at once, ring all-gather inside each machine.
     */
    PARALLEL_NETREDUCE("Parallel NetReduce", "parallel-netreduce");

    private final String displayName;
    private final String id;

    Algorithm(String displayName, String id) {
        this.displayName = displayName;
        this.id = id;
    }

    public String displayName() {
        return displayName;
    }

    /** Lower-case identifier used in CSV files and on the command line. */
    public String id() {
        return id;
    }

    public static Algorithm fromId(String id) {
        for (Algorithm a : values()) {
            if (a.id.equalsIgnoreCase(id) || a.name().equalsIgnoreCase(id)) {
                return a;
            }
        }
        throw new IllegalArgumentException("unknown algorithm '" + id + "'; expected one of flat-ring, hierarchical, netreduce, parallel-netreduce");
    }
}
