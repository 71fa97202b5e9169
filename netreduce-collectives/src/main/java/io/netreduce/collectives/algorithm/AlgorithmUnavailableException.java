package io.netreduce.collectives.algorithm;

/**
 * Every rank learned, while joining, that the algorithm cannot run for this group (the
 * switch refused the ring, none is configured, registering its connections failed): the
 * group may fall back to another algorithm where the user allowed it. Thrown on every rank
 * alike, because the ranks agree on the outcome through the rendezvous store.
 */
public final class AlgorithmUnavailableException extends Exception {
    private static final long serialVersionUID = 1L;

    public AlgorithmUnavailableException(String reason) {
        super(reason);
    }
}
