package io.netreduce.collectives.algorithm;

/**
 * A neighbour's message belongs to another call than this rank's: the ranks called
 * different collectives (kind, element count, reduction or root), or a different number of
 * them. Thrown before anything of the peer's data is used; the engine then gathers every
 * rank's call so that the error names them all.
 */
public class CallMismatchException extends ResultMismatchException {
    private static final long serialVersionUID = 1L;

    public CallMismatchException(String message) {
        super(message);
    }
}
