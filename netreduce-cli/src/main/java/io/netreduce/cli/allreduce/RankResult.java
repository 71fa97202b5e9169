package io.netreduce.cli.allreduce;

/**
 * What one worker measured for one (algorithm, size, placement): printed by the worker as
 * a {@code RESULT {json}} line on stdout and read by the coordinator.
 *
 * @param timeUs         mean time of one all-reduce over the timed iterations, µs
 * @param wrong          elements that differ from the reference in the checked run
 * @param wireBytesSent  bytes this worker's device put on the wire per all-reduce
 *                       (RoCE headers, payload, ICRC, ACKs and retransmissions included)
 * @param ackTimeouts    local ACK timer expiries of this worker's queue pairs over the timed
 *                       loop: each is a stall the peer's NAK did not end (a lost tail)
 * @param cpuSeconds     CPU time of this rank's whole process per all-reduce over the timed
 *                       loop (every thread: the caller's, the transport's), seconds; NaN
 *                       where the JVM cannot tell
 */
public record RankResult(int rank, String algorithm, long bytes, long count, boolean inPlace, int iterations,
                         double timeUs, long wrong, long wireBytesSent, long retransmittedPackets,
                         long ackTimeouts, double cpuSeconds) {
    /** Prefix of result lines on a worker's stdout. */
    public static final String PREFIX = "RESULT ";
}
