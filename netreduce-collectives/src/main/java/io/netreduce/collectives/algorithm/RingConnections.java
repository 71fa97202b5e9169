package io.netreduce.collectives.algorithm;

import io.netreduce.verbs.CompletionQueue;
import io.netreduce.verbs.Device;
import io.netreduce.verbs.DeviceOptions;
import io.netreduce.verbs.FaultPlan;
import io.netreduce.verbs.ProtectionDomain;
import io.netreduce.verbs.QpAttributes;
import io.netreduce.verbs.QpEndpoint;
import io.netreduce.verbs.QueuePair;
import io.netreduce.verbs.Verbs;
import io.netreduce.verbs.VerbsException;
import io.netreduce.verbs.tcp.TcpVerbsProvider;
import java.net.InetSocketAddress;
import java.time.Duration;

/**
 * One rank's place in the ring of queue pairs: a device (with the switch as gateway in
 * netreduce mode), one completion queue for everything, {@code toNext} (sends to rank r+1)
 * and {@code fromPrev} (receives from rank r-1). Both algorithms run over it.
 */
public final class RingConnections implements AutoCloseable {
    public final Device device;
    public final ProtectionDomain pd;
    public final CompletionQueue cq;
    public final QueuePair toNext;
    public final QueuePair fromPrev;

    public RingConnections(String transport, String localAddress, int port, InetSocketAddress gateway, int mtu,
                           int window, FaultPlan faults, Duration ackTimeout) {
        // The ring waits by polling its one completion queue, which covers both queue pairs:
        // a provider that can move the data on that thread (tcp's polled progress) should.
        device = Verbs.open(transport, TcpVerbsProvider.preferPolledProgress(DeviceOptions.builder()
                .localAddress(localAddress).port(port).gateway(gateway).egressFaults(faults)).build());
        try {
            pd = device.allocateProtectionDomain();
            int queue = 4 * window + 16;
            cq = device.createCompletionQueue(4 * queue + 64);
            QpAttributes attrs = QpAttributes.builder(cq, cq).maxSendWr(queue).maxRecvWr(queue).maxSge(2).mtu(mtu)
                    .ackTimeout(ackTimeout).build();
            toNext = pd.createQueuePair(attrs);
            fromPrev = pd.createQueuePair(attrs);
        } catch (RuntimeException e) {
            device.close();
            throw e;
        }
    }

    /**
     * {@code next}: rank r+1's fromPrev; {@code prev}: rank r-1's toNext. Both connect at
     * once: with a provider whose connect waits for the peer's, connecting one after the
     * other around a ring would wait in a circle.
     */
    public void connect(QpEndpoint next, QpEndpoint prev, Duration timeout) {
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

    @Override
    public void close() {
        device.close();
    }
}
