package io.netreduce.collectives.algorithm.ring;

import io.netreduce.collectives.algorithm.GroupContext;
import io.netreduce.collectives.algorithm.Traffic;
import io.netreduce.verbs.CompletionQueue;
import io.netreduce.verbs.Counter;
import io.netreduce.verbs.Device;
import io.netreduce.verbs.ProtectionDomain;
import io.netreduce.verbs.QpAttributes;
import io.netreduce.verbs.QpEndpoint;
import io.netreduce.verbs.QueuePair;
import java.time.Duration;

/**
 * The queue pairs of the partner schedules ({@link PartnerAllReduce}): for a
 * group of P = 2^L ranks, one to each partner {@code rank ^ 2^b}, b = 0..L-1, on the ring's
 * device and protection domain (so the tensors registered for the ring serve them too) but
 * with a completion queue of their own. The ring's queue pairs keep theirs: a neighbour that
 * starts the next ring operation early fills the ring's look-ahead receives without this
 * schedule's polls seeing it, and the reverse. The queue pairs and their completion queue
 * close with the ring's device.
 */
final class PartnerConnections {
    private static final String ENDPOINTS = "partner-endpoints/";

    final CompletionQueue cq;
    /** {@code partners[b]} is connected to rank {@code rank ^ (1 << b)}'s {@code partners[b]}. */
    final QueuePair[] partners;

    /**
     * {@code sends} and {@code receives}: the most of each a queue pair holds posted at once.
     */
    PartnerConnections(Device device, ProtectionDomain pd, int groupSize, int sends, int receives, int mtu,
                       Duration ackTimeout) {
        int levels = Integer.numberOfTrailingZeros(groupSize);
        cq = device.createCompletionQueue(levels * (sends + receives) + 16);
        QpAttributes attrs = QpAttributes.builder(cq, cq).maxSendWr(sends).maxRecvWr(receives).maxSge(2).mtu(mtu)
                .ackTimeout(ackTimeout).build();
        partners = new QueuePair[levels];
        for (int b = 0; b < levels; b++) {
            partners[b] = pd.createQueuePair(attrs);
        }
    }

    /** True for the group sizes the schedule serves: powers of two from 4 (at P = 2 it is the ring). */
    static boolean serves(int groupSize) {
        return groupSize >= 4 && Integer.bitCount(groupSize) == 1;
    }

    /**
     * Publishes this rank's endpoints and connects each queue pair to its partner's. The
     * levels connect in the same order on every rank, and each level's connections pair the
     * ranks off, so a provider whose connect waits for the peer's never waits in a circle.
     */
    void connect(GroupContext group) {
        StringBuilder mine = new StringBuilder();
        for (QueuePair qp : partners) {
            mine.append(mine.isEmpty() ? "" : " ").append(qp.localEndpoint());
        }
        group.publish(ENDPOINTS + group.rank(), mine.toString());
        for (int b = 0; b < partners.length; b++) {
            int partner = group.rank() ^ (1 << b);
            QpEndpoint theirs = QpEndpoint.parse(group.await(ENDPOINTS + partner).split(" ")[b]);
            partners[b].connect(theirs, group.timeout());
        }
    }

    /** The partner queue pairs' wire counters added to {@code ring}'s. */
    Traffic plus(Traffic ring) {
        return new Traffic(ring.bytesSent() + sum(Counter.BYTES_SENT), ring.bytesReceived() + sum(Counter.BYTES_RECEIVED),
                ring.packetsSent() + sum(Counter.PACKETS_SENT), ring.packetsReceived() + sum(Counter.PACKETS_RECEIVED),
                ring.retransmittedPackets() + sum(Counter.RETRANSMITTED_PACKETS),
                ring.rnrNaksReceived() + sum(Counter.RNR_NAKS_RECEIVED), ring.waitNanos());
    }

    private long sum(Counter c) {
        long total = 0;
        for (QueuePair qp : partners) {
            total += qp.counters().get(c);
        }
        return total;
    }
}
