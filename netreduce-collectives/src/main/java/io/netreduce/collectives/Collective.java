package io.netreduce.collectives;

/** The collective operations a {@link Communicator} runs, by the name of its method. */
public enum Collective {
    ALL_REDUCE("allReduce"),
    REDUCE_SCATTER("reduceScatter"),
    ALL_GATHER("allGather"),
    BROADCAST("broadcast"),
    BARRIER("barrier");

    private final String method;

    Collective(String method) {
        this.method = method;
    }

    /** The {@link Communicator} method that runs it, as messages and counters name it. */
    public String method() {
        return method;
    }
}
