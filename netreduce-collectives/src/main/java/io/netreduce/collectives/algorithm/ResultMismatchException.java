package io.netreduce.collectives.algorithm;

/**
 * A result's INA header (ring, message id, payload length) or its length differs from
 * what this rank sent: another rank reduces a tensor of a different length, or the switch
 * mixed up rings.
 */
public class ResultMismatchException extends HostException {
    private static final long serialVersionUID = 1L;

    public ResultMismatchException(String message) {
        super(message);
    }
}
