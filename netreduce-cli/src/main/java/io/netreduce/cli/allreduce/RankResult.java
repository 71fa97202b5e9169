package io.netreduce.cli.allreduce;

import io.netreduce.verbs.Counter;
import java.util.Locale;
import java.util.Map;

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
 * @param transportCounters every transport counter that moved over the timed loop, summed over
 *                       this worker's queue pairs, by its lower-case name ({@code rnr_naks_received})
 * @param switchCpuSeconds the switch data plane's CPU time per all-reduce over the timed loop,
 *                       read by rank 0 from the switch's metrics ({@link SwitchCpu}); NaN on
 *                       other ranks, for other algorithms, or where it cannot be read
 * @param timeP50Us      median time of one all-reduce over the timed iterations, µs; NaN
 *                       where the calls were not timed one by one
 * @param timeP99Us      99th percentile of the same: a rank that loses its core for a
 *                       while, or a stalled connection, shows here long before the mean
 */
public record RankResult(int rank, String algorithm, long bytes, long count, boolean inPlace, int iterations,
                         double timeUs, long wrong, long wireBytesSent, long retransmittedPackets,
                         long ackTimeouts, double cpuSeconds, Map<String, Long> transportCounters,
                         double switchCpuSeconds, double timeP50Us, double timeP99Us) {
    public RankResult {
        transportCounters = transportCounters == null ? Map.of() : Map.copyOf(transportCounters);
    }

    /** A transport counter's key in {@link #transportCounters} and in the JSON rows: {@code rnr_naks_received}. */
    public static String counterName(Counter c) {
        return c.name().toLowerCase(Locale.ROOT);
    }

    /** Without the switch's CPU. */
    public RankResult(int rank, String algorithm, long bytes, long count, boolean inPlace, int iterations,
                      double timeUs, long wrong, long wireBytesSent, long retransmittedPackets, long ackTimeouts,
                      double cpuSeconds, Map<String, Long> transportCounters) {
        this(rank, algorithm, bytes, count, inPlace, iterations, timeUs, wrong, wireBytesSent, retransmittedPackets,
                ackTimeouts, cpuSeconds, transportCounters, Double.NaN, Double.NaN, Double.NaN);
    }

    /** Without transport counters or the switch's CPU. */
    public RankResult(int rank, String algorithm, long bytes, long count, boolean inPlace, int iterations,
                      double timeUs, long wrong, long wireBytesSent, long retransmittedPackets, long ackTimeouts,
                      double cpuSeconds) {
        this(rank, algorithm, bytes, count, inPlace, iterations, timeUs, wrong, wireBytesSent, retransmittedPackets,
                ackTimeouts, cpuSeconds, Map.of(), Double.NaN, Double.NaN, Double.NaN);
    }

    /** Prefix of result lines on a worker's stdout. */
    public static final String PREFIX = "RESULT ";
}
