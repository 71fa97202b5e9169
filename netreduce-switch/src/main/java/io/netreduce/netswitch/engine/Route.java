package io.netreduce.netswitch.engine;

import io.netreduce.wire.roce.IcrcTemplate;
import io.netreduce.wire.roce.RoceAddressing;

/**
 * Where a datagram that arrives from {@code (source address, DestQP)} goes, and the canonical
 * addresses its ICRC is computed over. A data route belongs to a ring connection (rank r to
 * rank r+1) and feeds that ring's aggregators; an ACK route carries the receiver's ACKs and
 * NAKs back to the sender and is only ever forwarded unchanged.
 */
public final class Route {
    final Ring ring;
    final int rank;
    final boolean data;
    final ConnectionSpec connection;
    /** Next hop: the receiving host's address and port. */
    final int forwardIp;
    final int forwardPort;
    /** Canonical header of the ICRC, see {@link RoceAddressing}. */
    final int icrcSrcIp;
    final int icrcSrcPort;
    final int icrcDstIp;
    final int icrcDstPort;
    /** Precomputed masked canonical header for {@link IcrcTemplate}. */
    final byte[] icrcTemplate;

    private Route(Ring ring, ConnectionSpec c, boolean data) {
        this.ring = ring;
        this.rank = c.rank();
        this.data = data;
        this.connection = c;
        if (data) {
            forwardIp = c.dstIp();
            forwardPort = c.dstPort();
            icrcSrcIp = c.srcIp();
            icrcSrcPort = RoceAddressing.sourcePort(c.srcQpn());
            icrcDstIp = c.dstIp();
        } else {
            forwardIp = c.srcIp();
            forwardPort = c.srcPort();
            icrcSrcIp = c.dstIp();
            icrcSrcPort = RoceAddressing.sourcePort(c.dstQpn());
            icrcDstIp = c.srcIp();
        }
        icrcDstPort = forwardPort;
        icrcTemplate = IcrcTemplate.template(icrcSrcIp, icrcDstIp, icrcSrcPort, icrcDstPort);
    }

    static Route data(Ring ring, ConnectionSpec c) {
        return new Route(ring, c, true);
    }

    static Route ack(Ring ring, ConnectionSpec c) {
        return new Route(ring, c, false);
    }

    /**
     * Lookup key of the datagrams this route carries: their source address, whether they are
     * requests, and their DestQP. The request bit matters: every device numbers its queue
     * pairs from the same start, so a host's SENDs to its successor and its ACKs to its
     * predecessor can carry the same DestQP from the same address.
     */
    long key() {
        return data ? key(connection.srcIp(), true, connection.dstQpn())
                : key(connection.dstIp(), false, connection.srcQpn());
    }

    static long key(int sourceIp, boolean request, int destQp) {
        return ((sourceIp & 0xFFFFFFFFL) << 25) | (request ? 1L << 24 : 0) | (destQp & 0xFFFFFF);
    }

    public boolean isData() {
        return data;
    }

    public int forwardIp() {
        return forwardIp;
    }

    public int forwardPort() {
        return forwardPort;
    }
}
