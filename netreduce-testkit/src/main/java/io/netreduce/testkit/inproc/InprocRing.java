package io.netreduce.testkit.inproc;

import io.netreduce.verbs.CompletionQueue;
import io.netreduce.verbs.Device;
import io.netreduce.verbs.DeviceOptions;
import io.netreduce.verbs.ProtectionDomain;
import io.netreduce.verbs.QpAttributes;
import io.netreduce.verbs.QueuePair;
import io.netreduce.verbs.Verbs;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * P ranks wired as a NetReduce ring on any provider: rank r sends on {@code toNext}
 * (connected to rank r+1's {@code fromPrev}) and receives on {@code fromPrev}. Each rank's
 * device binds 127.0.0.(r+2); a gateway, when given, is every device's next hop.
 */
public final class InprocRing implements AutoCloseable {
    public static final class Rank {
        public final Device device;
        public final ProtectionDomain pd;
        public final CompletionQueue cq;
        public final QueuePair toNext;
        public final QueuePair fromPrev;

        Rank(String provider, int r, InetSocketAddress gateway, int port) {
            device = Verbs.open(provider, DeviceOptions.builder().localAddress("127.0.0." + (r + 2)).port(port)
                    .gateway(gateway).build());
            pd = device.allocateProtectionDomain();
            cq = device.createCompletionQueue(4096);
            QpAttributes attrs = QpAttributes.builder(cq, cq).maxSendWr(1024).maxRecvWr(1024).build();
            toNext = pd.createQueuePair(attrs);
            fromPrev = pd.createQueuePair(attrs);
        }
    }

    public final List<Rank> ranks = new ArrayList<>();

    public InprocRing(String provider, int p, InetSocketAddress gateway, int port) {
        for (int r = 0; r < p; r++) {
            ranks.add(new Rank(provider, r, gateway, port));
        }
        Duration t = Duration.ofSeconds(5);
        for (int r = 0; r < p; r++) {
            Rank me = ranks.get(r);
            Rank next = ranks.get((r + 1) % p);
            Rank prev = ranks.get((r + p - 1) % p);
            me.toNext.connect(next.fromPrev.localEndpoint(), t);
            me.fromPrev.connect(prev.toNext.localEndpoint(), t);
        }
    }

    @Override
    public void close() {
        for (Rank r : ranks) {
            r.device.close();
        }
    }
}
