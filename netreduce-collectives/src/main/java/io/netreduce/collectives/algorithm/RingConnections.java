package io.netreduce.collectives.algorithm;

import io.netreduce.verbs.CompletionQueue;
import io.netreduce.verbs.Counter;
import io.netreduce.verbs.Device;
import io.netreduce.verbs.DeviceOptions;
import io.netreduce.verbs.ProtectionDomain;
import io.netreduce.verbs.QpAttributes;
import io.netreduce.verbs.QpEndpoint;
import io.netreduce.verbs.QueuePair;
import io.netreduce.verbs.Verbs;
import io.netreduce.verbs.VerbsException;
import java.net.InetSocketAddress;
import java.time.Duration;

/**
 * One rank's place in the ring of queue pairs that both built-in algorithms run over: a
 * device (with the switch as gateway for in-network aggregation), one completion queue for
 * everything, {@code toNext} (sends to rank r+1) and {@code fromPrev} (receives from rank
 * r-1), and the {@link TensorMemory} the tensors are registered in. Set up in three steps, so that an algorithm can act between them (NetReduce
 * registers the connections with the switch before anyone connects): {@link #open},
 * {@link #publishEndpoints}, {@link #connect}.
 */
public final class RingConnections implements AutoCloseable {
    private static final String ENDPOINTS = "ring-endpoints/";

    public final Device device;
    public final ProtectionDomain pd;
    public final CompletionQueue cq;
    public final QueuePair toNext;
    public final QueuePair fromPrev;
    /** The tensors the algorithms move, registered (or staged) in this ring's protection domain. */
    public final TensorMemory memory;

    private RingConnections(Device device, int window, int extraReceives, int mtu, Duration ackTimeout) {
        this.device = device;
        try {
            pd = device.allocateProtectionDomain();
            int queue = 4 * window + 16;
            cq = device.createCompletionQueue(4 * (queue + extraReceives) + 64);
            QpAttributes attrs = QpAttributes.builder(cq, cq).maxSendWr(queue).maxRecvWr(queue + extraReceives)
                    .maxSge(2).mtu(mtu)
                    .ackTimeout(ackTimeout).build();
            toNext = pd.createQueuePair(attrs);
            fromPrev = pd.createQueuePair(attrs);
            memory = new TensorMemory(pd);
        } catch (RuntimeException e) {
            device.close();
            throw e;
        }
    }

    /**
     * Opens this rank's device and its two queue pairs, sized for {@code window} messages in
     * flight. {@code gateway}, if not null, is every packet's next hop. The ring waits by
     * polling its one completion queue, which covers both queue pairs, so the device is told
     * the caller polls (a transport that can move the data on that thread does) and how many
     * ranks share the host (with more than cores, a waiting rank must not hold its core); the
     * configuration's {@link io.netreduce.collectives.CommunicatorConfig#deviceProperties()} go with it.
     */
    public static RingConnections open(GroupContext group, InetSocketAddress gateway, int window) {
        return open(group, gateway, window, 0);
    }

    /** As {@link #open(GroupContext, InetSocketAddress, int)}, with room for {@code extraReceives} more receives. */
    public static RingConnections open(GroupContext group, InetSocketAddress gateway, int window, int extraReceives) {
        DeviceOptions.Builder options = DeviceOptions.builder().localAddress(group.localAddress())
                .port(group.config().devicePort()).gateway(gateway).egressFaults(group.rankFaults()).callerPolls(true)
                .hostPollers(group.ranksOnThisHost());
        group.config().deviceProperties().forEach(options::property);
        Device device = Verbs.open(group.config().transport(), options.build());
        return new RingConnections(device, window, extraReceives, group.config().mtu(), group.config().ackTimeout());
    }

    /** Tells the group this rank's endpoints ({@code toNext}, then {@code fromPrev}). */
    public void publishEndpoints(GroupContext group) {
        group.publish(ENDPOINTS + group.rank(), toNext.localEndpoint() + " " + fromPrev.localEndpoint());
    }

    /** Rank {@code q}'s endpoints as it published them: {@code [toNext, fromPrev]}. */
    public static QpEndpoint[] endpoints(GroupContext group, int q) {
        String[] e = group.await(ENDPOINTS + q).split(" ");
        return new QpEndpoint[] {QpEndpoint.parse(e[0]), QpEndpoint.parse(e[1])};
    }

    /**
     * Connects {@code toNext} to rank r+1's {@code fromPrev} and {@code fromPrev} to rank r-1's
     * {@code toNext}. Both connect at once: with a provider whose connect waits for the peer's,
     * connecting one after the other around a ring would wait in a circle.
     */
    public void connect(GroupContext group) {
        int r = group.rank();
        int p = group.size();
        QpEndpoint next = endpoints(group, (r + 1) % p)[1];
        QpEndpoint prev = endpoints(group, (r + p - 1) % p)[0];
        Duration timeout = group.timeout();
        RuntimeException[] failure = new RuntimeException[1];
        Thread t = new Thread(() -> {
            try {
                toNext.connect(next, timeout);
            } catch (RuntimeException e) {
                failure[0] = e;
            }
        }, "netreduce-connect-next");
        t.setDaemon(true);
        t.start();
        fromPrev.connect(prev, timeout);
        try {
            t.join(timeout.toMillis() + 1000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new VerbsException("interrupted while connecting to " + next);
        }
        if (t.isAlive()) {
            throw new VerbsException("connecting to " + next + " did not finish within " + timeout.toMillis() + " ms");
        }
        if (failure[0] != null) {
            throw failure[0];
        }
    }

    /** Both queue pairs' wire counters, with {@code waitNanos} the algorithm measured. */
    public Traffic traffic(long waitNanos) {
        return new Traffic(sum(Counter.BYTES_SENT), sum(Counter.BYTES_RECEIVED), sum(Counter.PACKETS_SENT),
                sum(Counter.PACKETS_RECEIVED), sum(Counter.RETRANSMITTED_PACKETS), sum(Counter.RNR_NAKS_RECEIVED),
                waitNanos);
    }

    private long sum(Counter c) {
        return toNext.counters().get(c) + fromPrev.counters().get(c);
    }

    /** Deregisters the tensors and closes the device, and with it the queue pairs. */
    @Override
    public void close() {
        memory.close();
        device.close();
    }
}
