package io.netreduce.collectives;

import java.time.Duration;
import java.util.Locale;

/**
 * A snapshot of one rank's counters ({@link Communicator#counters()}): collectives run by
 * kind, what its transport put on and took off the wire (headers, ACKs and retransmissions
 * included), packets retransmitted, the time spent waiting for the network, and the
 * collectives that failed, and the messages it sent to the rendezvous store (none per
 * collective in steady state, unless the agreement mode or the algorithm needs them).
 * Cumulative since the communicator opened; take two snapshots and
 * subtract for an interval. Immutable.
 */
public final class CommunicatorCounters {
    private final int rank;
    private final String algorithm;
    private final String transport;
    private final long[] collectives;
    private final long bytesSent;
    private final long bytesReceived;
    private final long packetsSent;
    private final long packetsReceived;
    private final long retransmittedPackets;
    private final long rnrNaksReceived;
    private final long waitNanos;
    private final long errors;
    private final long rendezvousMessages;

    public CommunicatorCounters(int rank, String algorithm, String transport, long[] collectives, long bytesSent,
                                long bytesReceived, long packetsSent, long packetsReceived, long retransmittedPackets,
                                long rnrNaksReceived, long waitNanos, long errors, long rendezvousMessages) {
        if (collectives.length != Collective.values().length) {
            throw new IllegalArgumentException("one count per collective kind, not " + collectives.length);
        }
        this.rank = rank;
        this.algorithm = algorithm;
        this.transport = transport;
        this.collectives = collectives.clone();
        this.bytesSent = bytesSent;
        this.bytesReceived = bytesReceived;
        this.packetsSent = packetsSent;
        this.packetsReceived = packetsReceived;
        this.retransmittedPackets = retransmittedPackets;
        this.rnrNaksReceived = rnrNaksReceived;
        this.waitNanos = waitNanos;
        this.errors = errors;
        this.rendezvousMessages = rendezvousMessages;
    }

    public int rank() {
        return rank;
    }

    /** Collectives of this kind that completed on this rank. */
    public long collectives(Collective kind) {
        return collectives[kind.ordinal()];
    }

    /** Collectives of every kind that completed on this rank. */
    public long collectives() {
        long sum = 0;
        for (long c : collectives) {
            sum += c;
        }
        return sum;
    }

    /** Wire bytes this rank's transport sent (headers, ACKs and retransmissions included). */
    public long bytesSent() {
        return bytesSent;
    }

    public long bytesReceived() {
        return bytesReceived;
    }

    public long packetsSent() {
        return packetsSent;
    }

    public long packetsReceived() {
        return packetsReceived;
    }

    /** Packets sent again by the transport's go-back-N (0 on transports that do not count them). */
    public long retransmittedPackets() {
        return retransmittedPackets;
    }

    /**
     * Messages this rank sent that found no receive posted at the peer and went again after
     * the RNR timer (0 on transports that do not count them): each costs about a
     * millisecond, so a count that grows with the collectives means a neighbour ran
     * further ahead than the receives posted for it.
     */
    public long rnrNaksReceived() {
        return rnrNaksReceived;
    }

    /** Time the collectives spent blocked waiting for the network. */
    public Duration waited() {
        return Duration.ofNanos(waitNanos);
    }

    /** Collectives that failed on this rank (after the first, the communicator refuses more). */
    public long errors() {
        return errors;
    }

    /**
     * Messages this rank sent to the rendezvous store (joining, closing, and per collective
     * only where calls are compared there: see {@code CommunicatorConfig.Agreement}).
     */
    public long rendezvousMessages() {
        return rendezvousMessages;
    }

    /**
     * The counters in the Prometheus text exposition format, labelled with the rank, for a
     * scrape endpoint or a file collector: {@code netreduce_collectives_total{rank="0",kind="allReduce"} 12}.
     */
    public String toPrometheus() {
        StringBuilder sb = new StringBuilder();
        String r = "rank=\"" + rank + "\"";
        sb.append("# HELP netreduce_collectives_total Collectives completed, by kind.\n");
        sb.append("# TYPE netreduce_collectives_total counter\n");
        for (Collective c : Collective.values()) {
            sb.append("netreduce_collectives_total{").append(r).append(",kind=\"").append(c.method()).append("\"} ")
                    .append(collectives(c)).append('\n');
        }
        metric(sb, "netreduce_wire_bytes_sent_total", "Wire bytes sent, headers and retransmissions included.", r,
                bytesSent);
        metric(sb, "netreduce_wire_bytes_received_total", "Wire bytes received and accepted.", r, bytesReceived);
        metric(sb, "netreduce_wire_packets_sent_total", "Packets sent.", r, packetsSent);
        metric(sb, "netreduce_wire_packets_received_total", "Packets received and accepted.", r, packetsReceived);
        metric(sb, "netreduce_retransmitted_packets_total", "Packets sent again by go-back-N.", r,
                retransmittedPackets);
        metric(sb, "netreduce_rnr_naks_received_total", "Messages resent after finding no receive posted.", r,
                rnrNaksReceived);
        sb.append("# HELP netreduce_wait_seconds_total Time spent waiting for the network.\n");
        sb.append("# TYPE netreduce_wait_seconds_total counter\n");
        sb.append("netreduce_wait_seconds_total{").append(r).append("} ")
                .append(String.format(Locale.ROOT, "%.6f", waitNanos / 1e9)).append('\n');
        metric(sb, "netreduce_collective_errors_total", "Collectives that failed.", r, errors);
        metric(sb, "netreduce_rendezvous_messages_total", "Messages sent to the rendezvous store.", r,
                rendezvousMessages);
        return sb.toString();
    }

    private static void metric(StringBuilder sb, String name, String help, String labels, long value) {
        sb.append("# HELP ").append(name).append(' ').append(help).append('\n');
        sb.append("# TYPE ").append(name).append(" counter\n");
        sb.append(name).append('{').append(labels).append("} ").append(value).append('\n');
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("rank ").append(rank).append(" (").append(algorithm).append(" over ")
                .append(transport).append("):");
        for (Collective c : Collective.values()) {
            if (collectives(c) > 0) {
                sb.append(' ').append(c.method()).append('=').append(collectives(c));
            }
        }
        return sb.append(", wire sent ").append(bytesSent).append(" B / ").append(packetsSent).append(" pkts, received ")
                .append(bytesReceived).append(" B / ").append(packetsReceived).append(" pkts, retransmitted ")
                .append(retransmittedPackets).append(", RNR NAKs ").append(rnrNaksReceived).append(", waited ")
                .append(waitNanos / 1_000_000).append(" ms, errors ")
                .append(errors).append(", rendezvous messages ").append(rendezvousMessages).toString();
    }
}
